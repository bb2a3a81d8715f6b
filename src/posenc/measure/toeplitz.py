"""How far trained attention is from depending on the offset alone: the Toeplitz defect.

Chapter 3 shows that sinusoidal positions added to the tokens give scores that depend on the
offset ``j - i`` only for special projections, and then measures the first layer of trained
models: the mean, over random sequences, of each head's log-weights relative to the diagonal,
and how far that mean is from a Toeplitz matrix, relative to its spread.

Shape legend:
    - ``B``: number of sequences; ``h``: number of heads; ``L``: sequence length
"""

from __future__ import annotations

import torch

from .. import store
from .._validation import check_int, check_tensor
from ..diagnostics import toeplitz_gap
from ..utils import seed_everything

__all__ = ["causal_toeplitz_defects", "first_layer_defects", "toeplitz_defect"]


def toeplitz_defect(matrix: torch.Tensor) -> float:
    """:func:`~posenc.diagnostics.toeplitz_gap` relative to the spread of the matrix.

    Args:
        matrix: ``(..., Lq, Lk)`` real tensor, not constant.

    Returns:
        ``toeplitz_gap(matrix) / (max - min)``: 0 for a Toeplitz matrix, of order one for a
        matrix whose diagonals vary as much as its entries.

    Raises:
        TypeError: if ``matrix`` is not a real tensor.
        ValueError: if ``matrix`` has fewer than 2 dimensions or is constant.
    """
    gap = toeplitz_gap(matrix)  # validates matrix
    spread = (matrix.max() - matrix.min()).item()
    if spread == 0.0:
        raise ValueError("matrix is constant: its defect relative to its spread is undefined")
    return gap / spread


def causal_toeplitz_defects(weights: torch.Tensor) -> list[float]:
    """Per head, the defect of the mean causal log-weights relative to the diagonal.

    For each sequence and head, ``s_ij = log a_ij - log a_ii`` (the score relative to the query's
    own key, which removes the softmax normaliser of row ``i``); the mean of ``s`` over the
    sequences, with the masked entries above the diagonal set to 0, is measured by
    :func:`toeplitz_defect`.

    Args:
        weights: ``(B, h, L, L)`` causal attention weights (zero above the diagonal).

    Returns:
        ``h`` defects, one per head.

    Raises:
        TypeError: if ``weights`` is not a floating tensor.
        ValueError: if ``weights`` is not ``(B, h, L, L)`` with ``L >= 2``.
    """
    weights = check_tensor("weights", weights, min_dim=4)
    if not weights.is_floating_point():
        raise TypeError(f"weights must be a floating tensor, got dtype {weights.dtype}")
    if weights.dim() != 4 or weights.shape[-1] != weights.shape[-2] or weights.shape[-1] < 2:
        raise ValueError(f"weights must be (B, h, L, L) with L >= 2, got shape {tuple(weights.shape)}")
    log_weights = weights.log()
    relative = log_weights - log_weights.diagonal(dim1=-2, dim2=-1)[..., None]
    return [toeplitz_defect(head) for head in relative.mean(0).tril()]


def first_layer_defects(name: str, seed: int, num_sequences: int = 512, *, data_seed: int = 300) -> list[float]:
    """:func:`causal_toeplitz_defects` of the first layer of a stored model on random tokens.

    The sequences are uniform random tokens of the model's training length, drawn from the
    generator of ``seed_everything(data_seed + seed)`` (which also reseeds the global
    generators, as every ``seed_everything`` call does).

    Args:
        name: a family of the model store (``posenc.store``), e.g. ``"ch8-lookback-rope"``.
        seed: the seed of the stored model.
        num_sequences: number of random sequences ``B``.
        data_seed: the seed of the sequences, before adding ``seed``.

    Returns:
        One defect per head of the first layer.

    Raises:
        KeyError: if the store has no family ``name``.
        TypeError, ValueError: if ``seed``, ``num_sequences`` or ``data_seed`` is not a valid
            integer (``num_sequences`` at least 1), or as ``posenc.store.load``.
    """
    seed = check_int("seed", seed, minimum=0)
    num_sequences = check_int("num_sequences", num_sequences, minimum=1)
    data_seed = check_int("data_seed", data_seed, minimum=0)
    config = store.spec(name).config
    tokens = torch.randint(
        config.vocab_size, (num_sequences, config.train_len), generator=seed_everything(data_seed + seed)
    )
    with torch.no_grad():  # a measurement: no autograd graph
        weights = store.load(name, seed).attention_weights(tokens)[0]
    return causal_toeplitz_defects(weights)
