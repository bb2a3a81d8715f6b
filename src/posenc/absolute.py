r"""Absolute position encodings: one-hot, sinusoidal and learned.

Shape legend:
    - ``L``: sequence length (number of positions)
    - ``D``: model dimension (width of the encoding)
    - ``N``: size of a position table (``max_len``)

The sinusoidal encoding of position :math:`i` is

.. math::
    P_{i, 2\ell} = \sin(i\theta_\ell), \qquad P_{i, 2\ell+1} = \cos(i\theta_\ell),

    \theta_\ell = b^{-2\ell/D}, \qquad \ell = 0, \dots, D/2 - 1,

with base :math:`b = 10000` in the paper of the original Transformer (and in d2l's
``PositionalEncoding``). The authors' tensor2tensor code, fairseq and Hugging Face's FSMT use a
variant (all sines before all cosines, :math:`\theta_\ell = b^{-\ell/(D/2-1)}`); this module follows
the paper.
"""

from __future__ import annotations

import torch
from torch import nn

from . import _angles
from ._validation import (
    align_to_input,
    check_even,
    check_floating,
    check_int,
    check_positive_float,
    check_tensor,
    resolve_sample_positions,
)

__all__ = [
    "LearnedPositionalEmbedding",
    "SinusoidalPositionalEncoding",
    "one_hot_encoding",
    "sinusoidal_encoding",
    "sinusoidal_offset_matrix",
    "sinusoidal_rows",
]


def one_hot_encoding(seq_len: int, max_len: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """One-hot position codes: row ``i`` is the ``i``-th standard basis vector of ``R^max_len``.

    Args:
        seq_len: number of positions ``L`` to encode (1 <= ``L`` <= ``max_len``).
        max_len: width ``N`` of each code, i.e. the number of positions that can be told apart.
        dtype: floating dtype of the result.

    Returns:
        ``(L, N)`` tensor, equal to the first ``L`` rows of the identity matrix.

    Raises:
        ValueError: if ``seq_len`` or ``max_len`` < 1, or ``seq_len > max_len``.
    """
    seq_len = check_int("seq_len", seq_len, minimum=1)
    max_len = check_int("max_len", max_len, minimum=1)
    if seq_len > max_len:
        raise ValueError(
            f"seq_len={seq_len} exceeds max_len={max_len}: one-hot codes of width max_len "
            f"can only encode positions 0..{max_len - 1}"
        )
    return torch.eye(max_len, dtype=dtype)[:seq_len]


def _sinusoids(positions: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """Float64 ``(L, D)`` table with sines in even and cosines in odd columns."""
    phase = _angles.angles(positions, dim, base)
    return torch.stack((phase.sin(), phase.cos()), dim=-1).flatten(-2)


def sinusoidal_encoding(
    seq_len: int, dim: int, base: float = 10000.0, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    r"""The fixed sinusoidal encoding of Vaswani et al. (2017).

    ``P[i, 2l] = sin(i / base**(2l/dim))`` and ``P[i, 2l+1] = cos(i / base**(2l/dim))`` for the
    frequency index ``l`` (:math:`\ell` in the book), the same table as d2l's
    ``PositionalEncoding``. Angles are formed in float64, then cast to ``dtype``.

    Args:
        seq_len: number of positions ``L`` (>= 1).
        dim: encoding width ``D``; must be even.
        base: frequency base ``b`` (> 0).
        dtype: floating dtype of the result.

    Returns:
        ``(L, D)`` tensor ``P``.

    Raises:
        ValueError: if ``seq_len < 1``, ``dim`` is not a positive even integer, or ``base <= 0``.
    """
    seq_len = check_int("seq_len", seq_len, minimum=1)
    return _sinusoids(torch.arange(seq_len), dim, base).to(dtype)


def sinusoidal_rows(
    positions: torch.Tensor, dim: int, base: float = 10000.0, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    r"""Sinusoidal vectors of arbitrary integer positions, negative ones included.

    Entry ``[..., 2l]`` is ``sin(m / base**(2l/dim))`` and ``[..., 2l+1]`` is
    ``cos(m / base**(2l/dim))`` for each position ``m`` of ``positions``: the rows of
    :func:`sinusoidal_encoding` for non-negative ``m``, and the same formula for negative ones
    (Transformer-XL's :math:`r_{i-j}` at masked future keys, where :math:`i - j < 0`).
    Angles are formed in float64, then cast to ``dtype``.

    Args:
        positions: integer tensor of any shape ``S``.
        dim: encoding width ``D``; must be even.
        base: frequency base ``b`` (> 0).
        dtype: floating dtype of the result.

    Returns:
        ``(*S, D)`` tensor.

    Raises:
        TypeError: if ``positions`` is not an integer tensor.
        ValueError: if ``dim`` is not a positive even integer or ``base <= 0``.
    """
    positions = check_tensor("positions", positions)
    if positions.is_floating_point() or positions.is_complex() or positions.dtype == torch.bool:
        raise TypeError(f"positions must be an integer tensor, got dtype {positions.dtype}")
    return _sinusoids(positions, dim, base).to(dtype)


def sinusoidal_offset_matrix(
    offset: float, dim: int, base: float = 10000.0, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    r"""The shift matrix ``T(delta)`` with ``P[i + delta] = T(delta) @ P[i]`` for every position ``i``.

    It does not depend on ``i``: for each frequency :math:`\theta_\ell` it is the block

    .. math::
        \begin{pmatrix}
            \cos \delta\theta_\ell & \sin \delta\theta_\ell \\ -\sin \delta\theta_\ell & \cos \delta\theta_\ell
        \end{pmatrix} = B(\delta\theta_\ell)^\top

    acting on the pair ``(P[i, 2l], P[i, 2l+1]) = (sin, cos)``, by the angle-addition formulas:
    the transpose of the rotary block :math:`B(\varphi)` of the notation page, so that
    :math:`T(\delta) = R_\delta^\top`.

    Args:
        offset: the shift ``delta`` (any real number; negative shifts move backwards).
        dim: encoding width ``D``; must be even.
        base: frequency base ``b`` (> 0).
        dtype: floating dtype of the result.

    Returns:
        ``(D, D)`` block-diagonal matrix. For a table ``P`` of shape ``(L, D)`` (rows are
        positions), ``P @ T(delta).T`` is the table shifted by ``delta``.

    Raises:
        TypeError: if ``offset`` is not a real number.
        ValueError: if ``dim`` is not a positive even integer or ``base <= 0``.
    """
    if isinstance(offset, bool) or not isinstance(offset, (int, float)):
        raise TypeError(f"offset must be a real number, got {type(offset).__name__} {offset!r}")
    phase = _angles.angles(torch.tensor([float(offset)], dtype=torch.float64), dim, base)[0]
    cos, sin = phase.cos(), phase.sin()
    blocks = torch.stack((torch.stack((cos, sin), -1), torch.stack((-sin, cos), -1)), -2)
    return _angles.block_diagonal(blocks).to(dtype)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the sinusoidal encoding to its input: ``x + P[positions]``.

    The table is cached as a non-persistent buffer (it is recomputed, not saved in a
    ``state_dict``) and grows on demand, so any length can be encoded.

    Args:
        dim: model dimension ``D`` (even).
        base: frequency base ``b`` (> 0).
        initial_len: number of positions cached up front (>= 1).

    Shapes:
        ``forward(x)``: ``x`` of shape ``(..., L, D)`` -> same shape.

    Raises:
        ValueError: if ``dim`` is odd, ``base <= 0`` or ``initial_len < 1``.
    """

    table: torch.Tensor

    def __init__(self, dim: int, base: float = 10000.0, initial_len: int = 512) -> None:
        super().__init__()
        self.dim = check_even("dim", dim)
        self.base = check_positive_float("base", base)
        initial_len = check_int("initial_len", initial_len, minimum=1)
        self.register_buffer("table", sinusoidal_encoding(initial_len, dim, base), persistent=False)

    def encoding(self, positions: torch.Tensor) -> torch.Tensor:
        """Return the rows of ``P`` at integer ``positions`` (``(L,)`` -> ``(L, D)``, ``(B, L)`` -> ``(B, L, D)``),
        growing the cache if needed."""
        needed = int(positions.max()) + 1 if positions.numel() else 0
        if needed > self.table.shape[0]:
            grown = sinusoidal_encoding(max(needed, 2 * self.table.shape[0]), self.dim, self.base)
            self.table = grown.to(self.table.device)
        return self.table[positions]

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """Return ``x + P[positions]``.

        Args:
            x: ``(..., L, D)`` token embeddings.
            positions: optional integer positions (default ``arange(L)``): ``(L,)``, or
                per-sample ``(B, L)`` with ``x`` of shape ``(B, ..., L, D)``.

        Returns:
            ``(..., L, D)`` tensor of the same dtype as ``x``.

        Raises:
            TypeError: if ``x`` is not a floating-point tensor or ``positions`` not an integer
                tensor.
            ValueError: if the last dimension is not ``D`` or ``positions`` has the wrong length or
                a negative entry.
        """
        x = check_floating("x", check_tensor("x", x, min_dim=2))
        if x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension dim={self.dim}, got shape {tuple(x.shape)}")
        positions = _integer_positions(positions, x)
        return x + align_to_input(self.encoding(positions), x).to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """A trainable table of ``max_len`` position vectors, added to the input: ``x + E[positions]``.

    Unlike the sinusoidal encoding it has no value for positions it was not built with:
    asking for a position ``>= max_len`` raises a :class:`ValueError`.

    Args:
        max_len: number of positions ``N`` in the table (>= 1).
        dim: model dimension ``D`` (>= 1).

    Shapes:
        ``forward(x)``: ``x`` of shape ``(..., L, D)`` -> same shape, with ``L <= N``.

    Raises:
        ValueError: if ``max_len < 1`` or ``dim < 1``.
    """

    def __init__(self, max_len: int, dim: int) -> None:
        super().__init__()
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.dim = check_int("dim", dim, minimum=1)
        self.embedding = nn.Embedding(max_len, dim)
        # Same scale as the token embeddings it is added to.
        nn.init.normal_(self.embedding.weight, std=dim**-0.5)

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """Return ``x + E[positions]``.

        Args:
            x: ``(..., L, D)`` token embeddings.
            positions: optional integer positions (default ``arange(L)``): ``(L,)``, or
                per-sample ``(B, L)`` with ``x`` of shape ``(B, ..., L, D)``.

        Returns:
            ``(..., L, D)`` tensor.

        Raises:
            TypeError: if ``x`` is not a floating-point tensor or ``positions`` not an integer
                tensor.
            ValueError: if the last dimension is not ``D``, a position is negative, or a
                position is ``>= max_len`` (the table has no row for it).
        """
        x = check_floating("x", check_tensor("x", x, min_dim=2))
        if x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension dim={self.dim}, got shape {tuple(x.shape)}")
        positions = _integer_positions(positions, x)
        if positions.numel() and int(positions.max()) >= self.max_len:
            raise ValueError(
                f"position {int(positions.max())} is beyond the learned table: it has max_len="
                f"{self.max_len} rows (positions 0..{self.max_len - 1}); a learned embedding cannot "
                "encode positions it was not built with"
            )
        return x + align_to_input(self.embedding(positions), x).to(x.dtype)


def _integer_positions(positions: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor:
    positions = resolve_sample_positions(positions, x)
    if positions.is_floating_point():
        raise TypeError(f"positions must be integers for a position table, got dtype {positions.dtype}")
    if positions.numel() and int(positions.min()) < 0:
        raise ValueError(f"positions must be >= 0, got {int(positions.min())}")
    return positions.long()
