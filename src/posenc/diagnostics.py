"""Checks that a score depends on positions only through their offset.

Shape legend:
    - ``Lq``, ``Lk``: numbers of queries and keys
    - ``L``: sequence length; ``d``: vector dimension
    - ``...``: any leading dimensions (batch, heads)

A score matrix ``S`` (rows are queries ``i``, columns keys ``j``) depends on the positions only
through the offset ``j - i`` exactly when it is constant along each diagonal, i.e. when it is a
Toeplitz matrix. :func:`toeplitz_gap` measures the distance from that; :func:`relativity_gap`
measures the same property for a position encoding that rotates (or otherwise transforms)
queries and keys, by shifting every position and comparing the scores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch

from ._validation import check_tensor

__all__ = ["relativity_gap", "score_terms", "similarity_by_distance", "toeplitz_gap"]


def score_terms(x: torch.Tensor, p: torch.Tensor, w: torch.Tensor) -> dict[str, torch.Tensor]:
    """The four terms of the score ``(x + p) W (x + p)^T`` of tokens ``x`` plus positions ``p``.

    The score of a layer that adds absolute position vectors to its tokens splits into
    ``x W x^T + x W p^T + p W x^T + p W p^T`` (chapter 2's four-term lemma); each term is an
    ``(..., L, L)`` matrix with queries along rows and keys along columns.

    Args:
        x: ``(..., L, d)`` token vectors (one per row).
        p: ``(..., L, d)`` position vectors, the same shape as ``x``.
        w: ``(d, d)`` score matrix, e.g. ``W_Q W_K^T`` (divided by ``sqrt(d_h)`` if wanted).

    Returns:
        A dict of the four terms, keyed ``"content-content"``, ``"content-position"``,
        ``"position-content"`` and ``"position-position"`` in this order; they add up to
        ``(x + p) W (x + p)^T``.

    Raises:
        TypeError: if an argument is not a tensor.
        ValueError: if ``x`` and ``p`` differ in shape or ``w`` is not ``(d, d)``.
    """
    x = check_tensor("x", x, min_dim=2)
    p = check_tensor("p", p, min_dim=2)
    w = check_tensor("w", w, min_dim=2)
    if x.shape != p.shape:
        raise ValueError(f"x and p must have the same shape, got {tuple(x.shape)} and {tuple(p.shape)}")
    if w.shape != (x.shape[-1], x.shape[-1]):
        raise ValueError(f"w must have shape (d, d) = {(x.shape[-1],) * 2} for vectors of x, got {tuple(w.shape)}")
    parts = {"content": x, "position": p}
    return {f"{a}-{b}": parts[a] @ w @ parts[b].transpose(-2, -1) for a in parts for b in parts}


def similarity_by_distance(table: torch.Tensor) -> torch.Tensor:
    """Mean cosine similarity of all pairs of rows of a position table at distance 0, 1, ...

    Entry ``r`` is the mean of ``cos(p_i, p_{i+r})`` over ``i = 0 .. N - 1 - r``: how alike the
    vectors of two positions ``r`` apart are, on average (1 at distance 0).

    Args:
        table: ``(N, d)`` real tensor, one row per position; no row may be zero.

    Returns:
        ``(N,)`` tensor of the table's dtype.

    Raises:
        TypeError: if ``table`` is not a tensor.
        ValueError: if ``table`` is not 2-D, or has a zero row (its cosine is undefined).
    """
    table = check_tensor("table", table, min_dim=2)
    if table.dim() != 2:
        raise ValueError(f"table must be 2-D (positions, features), got shape {tuple(table.shape)}")
    norms = table.norm(dim=-1)
    if bool((norms == 0).any()):
        raise ValueError(f"table has zero rows (no cosine): rows {(norms == 0).nonzero().flatten().tolist()}")
    unit = table / norms[:, None]
    gram = unit @ unit.T
    return torch.stack([gram.diagonal(r).mean() for r in range(len(gram))])


def toeplitz_gap(matrix: torch.Tensor) -> float:
    """Largest change along a diagonal: ``max |S[..., i+1, j+1] - S[..., i, j]|``.

    It is zero exactly when every matrix in the batch is Toeplitz, i.e. when entry ``(i, j)``
    depends on ``j - i`` only.

    Args:
        matrix: ``(..., Lq, Lk)`` real tensor (scores, a bias, attention weights).

    Returns:
        The gap as a Python float (0.0 for a matrix with a single row or column).

    Raises:
        TypeError: if ``matrix`` is not a real floating or integer tensor.
        ValueError: if ``matrix`` has fewer than 2 dimensions.
    """
    matrix = check_tensor("matrix", matrix, min_dim=2)
    if matrix.dtype == torch.bool or matrix.is_complex():
        raise TypeError(f"matrix must hold real numbers, got dtype {matrix.dtype}")
    steps = matrix[..., 1:, 1:] - matrix[..., :-1, :-1]
    return float(steps.abs().max()) if steps.numel() else 0.0


def relativity_gap(
    encode: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    queries: torch.Tensor,
    keys: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    shifts: Iterable[int | float] = (1, 37, 1000),
) -> float:
    """How much the scores of an encoding change when every position is shifted by the same amount.

    With ``S(p) = encode(queries, p) @ encode(keys, p).T``, returns
    ``max over shifts of max |S(p + shift) - S(p)|``. An encoding whose scores depend on
    positions only through offsets (RoPE) gives zero up to rounding; an absolute one does not.

    Args:
        encode: ``encode(x, positions)`` maps ``(..., L, d)`` vectors and ``(L,)`` positions to
            encoded vectors of shape ``(..., L, d')``, e.g. :func:`posenc.rotary.apply_rope`.
        queries: ``(..., L, d)`` floating tensor.
        keys: ``(..., L, d)`` floating tensor of the same shape.
        positions: ``(L,)`` positions; default ``arange(L)``.
        shifts: the common shifts to try (at least one).

    Returns:
        The largest absolute change of any score, as a Python float.

    Raises:
        TypeError: if ``encode`` is not callable or the inputs are not floating tensors.
        ValueError: if ``queries`` and ``keys`` differ in shape, ``positions`` has the wrong
            shape, or ``shifts`` is empty.
    """
    if not callable(encode):
        raise TypeError(f"encode must be a callable encode(x, positions), got {type(encode).__name__}")
    queries = check_tensor("queries", queries, min_dim=2)
    keys = check_tensor("keys", keys, min_dim=2)
    for name, value in (("queries", queries), ("keys", keys)):
        if not value.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    if queries.shape != keys.shape:
        raise ValueError(
            f"queries and keys must have the same shape, got {tuple(queries.shape)} and {tuple(keys.shape)}"
        )
    seq_len = queries.shape[-2]
    if positions is None:
        positions = torch.arange(seq_len)
    positions = check_tensor("positions", positions)
    if positions.shape != (seq_len,):
        raise ValueError(f"positions must have shape (L,) = ({seq_len},), got {tuple(positions.shape)}")
    shifts = list(shifts)
    if not shifts:
        raise ValueError("shifts must contain at least one shift")

    def scores(at: torch.Tensor) -> torch.Tensor:
        return encode(queries, at) @ encode(keys, at).transpose(-2, -1)

    reference = scores(positions)
    return max(float((scores(positions + shift) - reference).abs().max()) for shift in shifts)
