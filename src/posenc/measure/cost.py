"""What each position method costs in a transformer stack: parameters and position tensors.

Chapter 4 compares learned absolute embeddings, Shaw et al.'s relative vectors, Transformer-XL's
sinusoidal terms, T5's bucketed bias and ALiBi by their parameters and by the memory their
position tensors take at a long length, computed from tensor shapes (nothing is allocated), in a
naive and an efficient form. The table's numbers are built here; the chapter states and checks
what they show. Tested in ``tests/test_measure_cost.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from torch import nn

from .._validation import check_int
from ..absolute import LearnedPositionalEmbedding
from ..relative import RelativePositionEmbedding, T5RelativePositionBias

__all__ = ["mebibytes", "parameter_count", "position_method_costs"]

CostRow = tuple[int, float | None, float | None, str, str, str]


def mebibytes(*shape: int, bytes_per_entry: int = 4) -> float:
    """Size in MiB of a tensor of this shape (float32 by default).

    Args:
        *shape: the tensor's dimensions (each >= 0).
        bytes_per_entry: bytes per entry (4 for float32, 8 for int64).

    Returns:
        ``prod(shape) * bytes_per_entry / 2**20``.

    Raises:
        TypeError, ValueError: if a dimension or ``bytes_per_entry`` is not a non-negative integer.
    """
    for size in shape:
        check_int("shape", size, minimum=0)
    check_int("bytes_per_entry", bytes_per_entry, minimum=1)
    return math.prod(shape) * bytes_per_entry / 2**20


def parameter_count(module: nn.Module) -> int:
    """Number of parameters of a module (every entry of every parameter tensor).

    Raises:
        TypeError: if ``module`` is not an ``nn.Module``.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be an nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters())


def position_method_costs(
    model_dim: int,
    num_heads: int,
    head_dim: int,
    clip: int,
    length: int,
    layers: int,
    *,
    xl_scores: Callable[[int, int], nn.Module],
    learned_length: int = 512,
    t5_buckets: int = 32,
) -> dict[str, CostRow]:
    """The rows of chapter 4's cost table, one per position method.

    Every row is ``(parameters, naive MiB, efficient MiB, far offsets get, used by, works with a
    fused kernel as-is?)``. Parameters are counted on freshly built modules (in the order learned,
    Shaw, Transformer-XL, T5, so the global random stream advances as if the chapter built them);
    memory is that of the position tensors at ``length`` in float32, with int64 indices: Shaw
    et al. naive ``2 (n, n, d_h)`` vector tables, efficient ``(h, n, 2c + 1)`` gathered logits;
    Transformer-XL naive ``(n, n, d)`` vectors and their ``(h, n, n, d_h)`` projections,
    efficient ``(n, d)`` and ``(h, n, d_h)`` before the shift; each with an ``(n, n)`` index
    where one is gathered and the ``(h, n, n)`` position logits. The learned table has no
    memory entry (None: it cannot run beyond ``learned_length``).

    Args:
        model_dim, num_heads, head_dim: ``d``, ``h`` and ``d_h`` of the stack.
        clip: Shaw et al.'s clipping distance ``c``.
        length: the sequence length ``n`` of the memory columns.
        layers: number of layers (Shaw et al. and Transformer-XL have position parameters in each).
        xl_scores: builds one head's Transformer-XL position parameters from ``(d, d_h)``.
        learned_length: rows of the learned absolute table.
        t5_buckets: T5's number of buckets (one table, shared by the layers).

    Returns:
        Method name -> row, in the order learned absolute, Shaw et al., Transformer-XL, T5, ALiBi.

    Raises:
        TypeError, ValueError: if a size is not a positive integer.
    """
    sizes = {"model_dim": model_dim, "num_heads": num_heads, "head_dim": head_dim, "clip": clip}
    sizes |= {"length": length, "layers": layers, "learned_length": learned_length, "t5_buckets": t5_buckets}
    for name, size in sizes.items():
        check_int(name, size, minimum=1)
    d, h, d_h, n = model_dim, num_heads, head_dim, length
    logits, index = mebibytes(h, n, n), mebibytes(n, n, bytes_per_entry=8)
    learned = parameter_count(LearnedPositionalEmbedding(learned_length, d))
    shaw = layers * 2 * parameter_count(RelativePositionEmbedding(clip, d_h))
    xl = layers * h * parameter_count(xl_scores(d, d_h))
    t5 = parameter_count(T5RelativePositionBias(h, t5_buckets))
    return {
        "learned absolute": (
            learned,
            None,
            None,
            f"none: no row beyond {learned_length - 1}",
            "BERT, GPT-2",
            "yes: added to the inputs",
        ),
        "Shaw et al.": (
            shaw,
            2 * mebibytes(n, n, d_h) + index + logits,
            mebibytes(h, n, 2 * clip + 1) + index + logits,
            f"reused: the end vectors beyond ±{clip}",
            "Music Transformer",
            "no: q w gathered per pair",
        ),
        "Transformer-XL": (
            xl,
            mebibytes(n, n, d) + mebibytes(h, n, n, d_h) + logits,
            mebibytes(n, d) + mebibytes(h, n, d_h) + logits,
            "new: sinusoids of any offset",
            "XLNet",
            "no: two matmuls and a shift",
        ),
        "T5": (t5, index + logits, index + logits, "reused: the last bucket", "T5", "no: a bias read per pair"),
        "ALiBi": (
            0,
            logits,
            logits,
            "new: the line continues",
            "BLOOM, MPT; symmetric: MosaicBERT, DNABERT-2",
            "yes: slopes only",
        ),
    }
