r"""Rotary position embedding (RoPE, Su et al.): dense, elementwise and complex forms.

Shape legend:
    - ``L``: sequence length
    - ``d``: dimension being rotated (the head dimension); always even
    - ``...``: any leading dimensions (batch, heads)

RoPE rotates the pair of coordinates number ``l`` of a query or key at position ``m`` by the
angle :math:`m\theta_\ell`, with :math:`\theta_\ell = b^{-2\ell/d}`, :math:`\ell = 0, \dots, d/2 - 1`:

.. math::
    R_m = \operatorname{diag}\!\left(B(m\theta_0), \dots, B(m\theta_{d/2-1})\right), \qquad
    B(\phi) = \begin{pmatrix} \cos\phi & -\sin\phi \\ \sin\phi & \cos\phi \end{pmatrix}.

Because :math:`R_m^\top R_n = R_{n-m}`, the score :math:`(R_m q)^\top (R_n k) = q^\top R_{n-m} k`
depends on the positions only through their offset :math:`n - m`.

Two layouts decide *which* coordinates form pair ``l``:

- ``"interleaved"``: ``(2l, 2l + 1)`` (RoFormer paper, Meta's LLaMA reference code);
- ``"half"``: ``(l, l + d/2)`` (GPT-NeoX, Hugging Face Llama's ``rotate_half``).

They are the same rotation seen through a fixed permutation of coordinates
(:func:`interleaved_to_half`, :func:`half_to_interleaved`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from . import _angles
from ._validation import (
    align_to_input,
    check_choice,
    check_even,
    check_floating,
    check_int,
    check_positive_float,
    check_tensor,
    resolve_sample_positions,
)

__all__ = [
    "ROPE_LAYOUTS",
    "RotaryEmbedding",
    "apply_rope",
    "apply_rope_complex",
    "complex_pairs",
    "half_to_interleaved",
    "interleaved_to_half",
    "rope_angles",
    "rope_frequencies",
    "rope_matrix",
    "rotate_half",
    "rotate_pairs",
]

ROPE_LAYOUTS = ("interleaved", "half")
"""Pairings of coordinates understood by :func:`apply_rope`."""

DEFAULT_BASE = 10000.0
"""Frequency base ``b`` of RoFormer, the default of every function here."""


def rope_frequencies(dim: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    r"""Rotation frequencies :math:`\theta_\ell = b^{-2\ell/d}` for :math:`\ell = 0, \dots, d/2 - 1`.

    Args:
        dim: rotated dimension ``d``; must be even.
        base: base ``b`` (> 0); 10000 in RoFormer.

    Returns:
        ``(d/2,)`` float64 tensor, decreasing from 1.

    Raises:
        ValueError: if ``dim`` is not a positive even integer or ``base <= 0``.
    """
    return _angles.frequencies(dim, base)


def rope_angles(positions: torch.Tensor, dim: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    r"""The angle table :math:`m\,\theta_\ell` of every position ``m``, formed in float64.

    Args:
        positions: ``(...,)`` integer or real tensor of positions.
        dim: rotated dimension ``d``; must be even.
        base: base ``b`` (> 0) of :func:`rope_frequencies`.

    Returns:
        ``(..., d/2)`` float64 tensor: entry ``[..., l]`` is ``positions[...] * theta_l``.

    Raises:
        TypeError: if ``positions`` is not a tensor.
        ValueError: if ``dim`` is not a positive even integer or ``base <= 0``.
    """
    positions = check_tensor("positions", positions)
    return _angles.angles(positions, dim, base)


def rope_matrix(
    position: float, dim: int, base: float = 10000.0, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """The dense rotation matrix ``R_m`` of RoPE, interleaved layout.

    Block ``l`` is ``[[cos m*theta_l, -sin m*theta_l], [sin m*theta_l, cos m*theta_l]]`` and acts
    on coordinates ``(2l, 2l + 1)``. This ``O(d^2)`` form is for teaching and testing; use
    :func:`apply_rope` to rotate tensors.

    Args:
        position: the position ``m`` (an integer or real number).
        dim: dimension ``d``; must be even.
        base: frequency base (> 0).
        dtype: floating dtype of the result.

    Returns:
        ``(d, d)`` orthogonal matrix; ``R_m @ x`` rotates a column vector ``x`` to position ``m``.

    Raises:
        TypeError: if ``position`` is not a real number.
        ValueError: if ``dim`` is not a positive even integer or ``base <= 0``.
    """
    if isinstance(position, torch.Tensor) and position.dim() == 0:
        position = position.item()
    if isinstance(position, bool) or not isinstance(position, (int, float)):
        raise TypeError(f"position must be a real number, got {type(position).__name__} {position!r}")
    phase = _angles.angles(torch.tensor([float(position)], dtype=torch.float64), dim, base)[0]
    cos, sin = phase.cos(), phase.sin()
    blocks = torch.stack((torch.stack((cos, -sin), -1), torch.stack((sin, cos), -1)), -2)
    return _angles.block_diagonal(blocks).to(dtype)


def _check_rope_input(x: object) -> tuple[torch.Tensor, int, int]:
    x = check_floating("x", check_tensor("x", x, min_dim=2))
    if x.shape[-1] % 2 or x.shape[-1] == 0:
        raise ValueError(
            "the last dimension of x (dim) must be a positive even number because RoPE rotates "
            f"pairs of coordinates, got x of shape {tuple(x.shape)}"
        )
    return x, x.shape[-2], x.shape[-1]


def _resolve_frequencies(frequencies: torch.Tensor | None, dim: int, base: float) -> torch.Tensor:
    """The ``(d/2,)`` float64 frequencies: ``rope_frequencies(dim, base)`` or the checked ``frequencies``."""
    base = check_positive_float("base", base)
    if frequencies is None:
        return _angles.frequencies(dim, base)
    if base != DEFAULT_BASE:
        raise ValueError(
            f"give either base or frequencies, not both: got base={base} and a frequencies tensor "
            "(the frequencies already fix every angle)"
        )
    frequencies = check_tensor("frequencies", frequencies)
    if not frequencies.is_floating_point():
        raise TypeError(f"frequencies must be a floating-point tensor, got dtype {frequencies.dtype}")
    if frequencies.shape != (dim // 2,):
        raise ValueError(
            f"frequencies must have shape (dim/2,) = ({dim // 2},) for dim={dim}, "
            f"got shape {tuple(frequencies.shape)}"
        )
    if not bool(torch.isfinite(frequencies).all()):
        raise ValueError("frequencies must be finite")
    return frequencies.to(torch.float64)


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    # Half-precision inputs are rotated in float32 and cast back: cos and sin of large angles
    # cannot be represented well enough in 16 bits.
    return torch.promote_types(x.dtype, torch.float32)


def _complex_pairs(x: torch.Tensor) -> torch.Tensor:
    """View the interleaved pairs ``(x[2l], x[2l+1])`` of ``(..., d)`` as ``(..., d/2)`` complex numbers."""
    x = x.contiguous()
    # view_as_complex needs an even storage offset, which a slice of a larger tensor may lack.
    if x.storage_offset() % 2:
        x = x.clone()
    return torch.view_as_complex(x.unflatten(-1, (x.shape[-1] // 2, 2)))


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    """Rotate pairs of ``x`` (``(..., L, d)``) by angles with ``cos``/``sin`` of shape ``(L, d/2)``."""
    if layout == "interleaved":
        # Interleaved pairs are adjacent in memory, so (a, b) can be read as a + ib without a
        # copy and rotated by a single complex multiplication: the fastest kernel on a CPU.
        return torch.view_as_real(_complex_pairs(x) * torch.complex(cos, sin)).flatten(-2)
    first, second = x.chunk(2, dim=-1)
    return torch.cat(
        (torch.addcmul(first * cos, second, sin, value=-1), torch.addcmul(first * sin, second, cos)), dim=-1
    )


def _resolve_rotary_dim(rotary_dim: int | None, dim: int) -> int:
    """The number of leading coordinates to rotate: ``dim`` by default, else an even ``2 <= r <= dim``."""
    if rotary_dim is None:
        return dim
    rotary_dim = check_even("rotary_dim", rotary_dim)
    if rotary_dim > dim:
        raise ValueError(f"rotary_dim must be at most the last dimension of x ({dim}), got {rotary_dim}")
    return rotary_dim


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    base: float = DEFAULT_BASE,
    layout: str = "interleaved",
    frequencies: torch.Tensor | None = None,
    rotary_dim: int | None = None,
) -> torch.Tensor:
    """Rotate every token of ``x`` to its position: ``x[..., m, :] -> R_m x[..., m, :]``.

    Each pair ``(a, b)`` is rotated by its angle ``phi`` without forming a ``d x d`` matrix:
    ``(a, b) -> (a cos phi - b sin phi, a sin phi + b cos phi)``. Angles are formed in float64
    and half-precision inputs are rotated in float32; the result has the dtype of ``x``.

    Args:
        x: ``(..., L, d)`` queries or keys; ``d`` even.
        positions: optional positions (integers or reals), default ``arange(L)``: either ``(L,)``,
            shared by every sequence, or ``(B, L)``, one row per sequence (packed sequences, left
            padding), in which case ``x`` is ``(B, L, d)`` or ``(B, h, L, d)``.
        base: frequency base (> 0); leave it at its default when giving ``frequencies``.
        layout: ``"interleaved"`` (pairs ``(2l, 2l+1)``) or ``"half"`` (pairs ``(l, l+d/2)``).
        frequencies: optional ``(d/2,)`` frequencies used instead of ``rope_frequencies(d, base)``,
            e.g. a scaled set for context extension (``(r/2,)`` with ``rotary_dim=r``).
        rotary_dim: optional even ``r <= d`` for *partial* rotary (GPT-NeoX's ``rotary_pct``,
            Hugging Face's ``partial_rotary_factor``, GPT-J's ``rotary_dim``): only the first ``r``
            coordinates are rotated, as a RoPE of dimension ``r`` (frequencies ``b^(-2l/r)``), in
            the given layout; the other ``d - r`` pass through unchanged. Default: ``d``.

    Returns:
        Tensor of the same shape and dtype as ``x``.

    Raises:
        TypeError: if ``x`` or ``frequencies`` is not a floating tensor.
        ValueError: if ``d`` is odd, ``positions`` is neither ``(L,)`` nor ``(B, L)`` matching ``x``,
            ``layout`` is unknown, ``base <= 0``, ``frequencies`` is not finite of shape ``(d/2,)``,
            or both ``base`` and ``frequencies`` are given, or ``rotary_dim`` is odd or exceeds ``d``.
    """
    x, _, dim = _check_rope_input(x)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
    rotated_dim = _resolve_rotary_dim(rotary_dim, dim)
    if rotated_dim < dim:
        rotated = apply_rope(x[..., :rotated_dim], positions, base=base, layout=layout, frequencies=frequencies)
        return torch.cat((rotated, x[..., rotated_dim:]), dim=-1)
    theta = _resolve_frequencies(frequencies, dim, base)
    positions = resolve_sample_positions(positions, x)
    phase = align_to_input(_angles.angles_from_frequencies(positions, theta), x)
    dtype = _compute_dtype(x)
    return _rotate(x.to(dtype), phase.cos().to(dtype), phase.sin().to(dtype), layout).to(x.dtype)


def apply_rope_complex(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    base: float = DEFAULT_BASE,
    frequencies: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""RoPE through complex numbers, interleaved layout.

    Pair ``(x[2l], x[2l+1])`` is read as :math:`z_\ell = x_{2\ell} + \mathrm{i}\,x_{2\ell+1}` and multiplied by
    :math:`e^{\mathrm{i} m \theta_\ell}`, which rotates it by :math:`m\theta_\ell` in the complex plane.

    Args:
        x: ``(..., L, d)``; ``d`` even.
        positions: optional ``(L,)`` or per-sample ``(B, L)`` positions, as in :func:`apply_rope`.
        base: frequency base (> 0); leave it at its default when giving ``frequencies``.
        frequencies: optional ``(d/2,)`` frequencies used instead of ``rope_frequencies(d, base)``.

    Returns:
        Tensor of the same shape and dtype as ``x``, equal to ``apply_rope(x, positions, base=base)``.

    Raises:
        TypeError: if ``x`` or ``frequencies`` is not a floating tensor.
        ValueError: as :func:`apply_rope`.
    """
    x, _, dim = _check_rope_input(x)
    theta = _resolve_frequencies(frequencies, dim, base)
    positions = resolve_sample_positions(positions, x)
    phase = align_to_input(_angles.angles_from_frequencies(positions, theta), x)
    dtype = _compute_dtype(x)
    pairs = _complex_pairs(x.to(dtype))
    rotations = torch.polar(torch.ones_like(phase), phase).to(pairs.dtype)
    return torch.view_as_real(pairs * rotations).flatten(-2).to(x.dtype)


def complex_pairs(x: torch.Tensor) -> torch.Tensor:
    r"""The interleaved pairs of ``x`` as complex numbers, :math:`x_{2\ell} + \mathrm{i}\, x_{2\ell+1}`.

    The map of the complex form of RoPE: rotating pair ``l`` by ``m * theta_l`` is multiplying
    entry ``l`` by ``exp(i m theta_l)``, so ``(R_m q)^T (R_n k) = Re sum_l conj(a_l) c_l
    exp(i (n - m) theta_l)`` with ``a = complex_pairs(q)`` and ``c = complex_pairs(k)``.

    Args:
        x: ``(..., d)`` float32 or float64 tensor with ``d`` even.

    Returns:
        ``(..., d/2)`` complex64 or complex128 tensor (it may share memory with ``x``).

    Raises:
        TypeError: if ``x`` is not a float32 or float64 tensor.
        ValueError: if the last dimension is odd.
    """
    x = check_tensor("x", x, min_dim=1)
    if x.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"x must be float32 or float64, got {x.dtype}")
    check_even("the last dimension of x", x.shape[-1])
    return _complex_pairs(x)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """Map ``(x1, x2) -> (-x2, x1)`` where ``x1, x2`` are the two halves of the last dimension.

    With it, the ``"half"`` layout of RoPE reads
    ``x * cat(cos, cos) + rotate_half(x) * cat(sin, sin)`` (GPT-NeoX, Hugging Face Llama).

    Args:
        x: ``(..., d)`` with ``d`` even.

    Returns:
        Tensor of the same shape.

    Raises:
        ValueError: if the last dimension is odd.
    """
    x = check_tensor("x", x, min_dim=1)
    check_even("the last dimension of x", x.shape[-1])
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def rotate_pairs(x: torch.Tensor) -> torch.Tensor:
    """Map ``(x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)``: each adjacent pair turned by 90°.

    The interleaved counterpart of :func:`rotate_half`: the ``"interleaved"`` layout of RoPE
    reads ``x * cos2 + rotate_pairs(x) * sin2``, each angle repeated next to itself in ``cos2``
    and ``sin2`` (RoFormer).

    Args:
        x: ``(..., d)`` with ``d`` even.

    Returns:
        Tensor of the same shape.

    Raises:
        ValueError: if the last dimension is odd.
    """
    x = check_tensor("x", x, min_dim=1)
    check_even("the last dimension of x", x.shape[-1])
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((-odd, even), dim=-1).flatten(-2)


def interleaved_to_half(x: torch.Tensor) -> torch.Tensor:
    """Permute the last dimension from interleaved to half layout.

    Coordinates ``(x0, x1, x2, x3, ...)`` become ``(x0, x2, ..., x1, x3, ...)``: the pair
    ``(2l, 2l+1)`` moves to ``(l, l + d/2)``.

    Args:
        x: ``(..., d)`` with ``d`` even.

    Returns:
        Tensor of the same shape.

    Raises:
        ValueError: if the last dimension is odd.
    """
    x = check_tensor("x", x, min_dim=1)
    dim = check_even("the last dimension of x", x.shape[-1])
    return x.unflatten(-1, (dim // 2, 2)).transpose(-1, -2).flatten(-2)


def half_to_interleaved(x: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`interleaved_to_half`: the pair ``(l, l + d/2)`` moves to ``(2l, 2l+1)``.

    Args:
        x: ``(..., d)`` with ``d`` even.

    Returns:
        Tensor of the same shape.

    Raises:
        ValueError: if the last dimension is odd.
    """
    x = check_tensor("x", x, min_dim=1)
    dim = check_even("the last dimension of x", x.shape[-1])
    return x.unflatten(-1, (2, dim // 2)).transpose(-1, -2).flatten(-2)


_PRECISE_BUFFERS = ("frequencies", "cos", "sin")
"""Buffers of :class:`RotaryEmbedding` whose dtype a conversion of the module must not lower."""


def _table_dtype(device: torch.device, dtype: torch.dtype) -> torch.dtype:
    """``dtype`` (float64 for the tables), except float32 on Apple's MPS, which has no float64.

    float64 wherever the device has it makes the module as exact as :func:`apply_rope` for every
    input dtype; on MPS float32 is the best on offer.
    """
    return torch.float32 if device.type == "mps" else dtype


class RotaryEmbedding(nn.Module):
    """RoPE as a module, with a cos/sin cache that grows on demand.

    The cache holds ``cos(m theta_l)`` and ``sin(m theta_l)`` for ``m < cached_len`` in float64
    (float32 on Apple's MPS, which has no float64), as non-persistent buffers: they move with the
    module between devices but are not saved in a ``state_dict``. Asking for a larger integer
    position recomputes the cache (at least doubling it); real-valued positions (e.g.
    interpolated ones) and negative ones are computed directly.

    A dtype conversion of the module (``module.to(torch.bfloat16)``, ``.half()``, ``.float()``,
    usually applied to a whole model) moves these buffers to the new device but never changes
    their dtype: rounding the frequencies or the cache to 16 bits would put an error of up to
    ``m * theta_l * 2^-8`` radians into the angle of position ``m``. Inputs of any dtype are
    rotated in float32 or better and cast back, as in :func:`apply_rope`.

    Args:
        dim: rotated dimension ``d`` (even), usually the head dimension.
        base: frequency base (> 0); leave it at its default when giving ``frequencies``.
        layout: ``"interleaved"`` or ``"half"``.
        initial_len: number of positions cached up front (>= 1).
        frequencies: optional ``(d/2,)`` frequencies used instead of ``rope_frequencies(d, base)``
            (kept as the non-persistent float64 buffer ``frequencies``); ``(r/2,)`` with ``rotary_dim``.
        rotary_dim: optional even ``r <= dim``: rotate only the first ``r`` coordinates, with a RoPE
            of dimension ``r``, and pass the rest through (partial rotary, as in :func:`apply_rope`).

    Shapes:
        ``forward(x, positions=None)``: ``x`` of shape ``(..., L, d)`` -> same shape and dtype;
        ``positions`` is ``(L,)`` or per-sample ``(B, L)`` as in :func:`apply_rope`.

    Raises:
        TypeError: if ``frequencies`` is not a floating tensor.
        ValueError: if ``dim`` is odd, ``base <= 0``, ``layout`` is unknown, ``initial_len < 1``,
            ``frequencies`` is not finite of shape ``(d/2,)``, both ``base`` and ``frequencies``
            are given, or ``rotary_dim`` is odd or larger than ``dim``.
    """

    cos: torch.Tensor
    sin: torch.Tensor
    frequencies: torch.Tensor

    def __init__(
        self,
        dim: int,
        base: float = DEFAULT_BASE,
        layout: str = "interleaved",
        initial_len: int = 2048,
        *,
        frequencies: torch.Tensor | None = None,
        rotary_dim: int | None = None,
    ) -> None:
        super().__init__()
        self.dim = check_even("dim", dim)
        self.rotary_dim = _resolve_rotary_dim(rotary_dim, self.dim)
        self.base = check_positive_float("base", base)
        self.layout = check_choice("layout", layout, ROPE_LAYOUTS)
        initial_len = check_int("initial_len", initial_len, minimum=1)
        theta = _resolve_frequencies(frequencies, self.rotary_dim, base)
        self.register_buffer("frequencies", theta, persistent=False)
        self.register_buffer("cos", torch.empty(0), persistent=False)
        self.register_buffer("sin", torch.empty(0), persistent=False)
        self._build_cache(initial_len)

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> RotaryEmbedding:
        # nn.Module.to/half/bfloat16/float/double all go through _apply and convert floating
        # buffers. Let them move the tables between devices, but restore the precision: the
        # angles must not inherit the activations' dtype (the bug of ex-ropec-4 in the book).
        before = {name: getattr(self, name) for name in _PRECISE_BUFFERS}
        super()._apply(fn, recurse)
        for name, table in before.items():
            moved = getattr(self, name)
            dtype = _table_dtype(moved.device, table.dtype)
            if moved.dtype != dtype:
                setattr(self, name, table.to(moved.device, dtype))
        return self

    @property
    def cached_len(self) -> int:
        """Number of positions whose cos/sin are cached."""
        return self.cos.shape[0]

    def _build_cache(self, length: int) -> None:
        positions = torch.arange(length, device=self.frequencies.device)
        phase = _angles.angles_from_frequencies(positions, self.frequencies)
        dtype = _table_dtype(phase.device, torch.float64)
        self.cos = phase.cos().to(dtype)
        self.sin = phase.sin().to(dtype)

    def _cos_sin(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if positions.is_floating_point() or (positions.numel() and int(positions.min()) < 0):
            phase = _angles.angles_from_frequencies(positions, self.frequencies)
            return phase.cos(), phase.sin()
        needed = int(positions.max()) + 1 if positions.numel() else 0
        if needed > self.cached_len:
            self._build_cache(max(needed, 2 * self.cached_len))
        return self.cos[positions], self.sin[positions]

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """Rotate ``x`` (``(..., L, d)``) to ``positions`` (default ``arange(L)``).

        Raises:
            TypeError: if ``x`` is not a floating-point tensor.
            ValueError: if the last dimension of ``x`` is not ``dim`` or ``positions`` is neither
                ``(L,)`` nor ``(B, L)`` matching ``x``.
        """
        x, _, dim = _check_rope_input(x)
        if dim != self.dim:
            raise ValueError(f"x must have last dimension dim={self.dim}, got shape {tuple(x.shape)}")
        positions = resolve_sample_positions(positions, x).to(self.cos.device)
        cos, sin = (align_to_input(table, x) for table in self._cos_sin(positions))
        dtype = _compute_dtype(x)
        part = x[..., : self.rotary_dim].to(dtype)
        rotated = _rotate(part, cos.to(x.device, dtype), sin.to(x.device, dtype), self.layout).to(x.dtype)
        if self.rotary_dim == self.dim:
            return rotated
        return torch.cat((rotated, x[..., self.rotary_dim :]), dim=-1)
