"""Reading an answer pair by pair: the angle by which each pair of coordinates was turned, or is encoded.

A RoPE exercise turns each pair of coordinates of a vector by an angle; a wrong answer that is still a rotation of
each pair says by which angle it turned every pair, and those angles say the slip: pairs left unrotated (an angle of
0), the positions each token was really turned by (``_positions_used``), which coordinates were paired (``_pairing``,
read by turning the basis vectors), the keys a streaming cache holds row by row, or errors of the size that rounding
the angles to half precision makes, which no slip in a formula reproduces on every pair. A sinusoidal table's pair of
columns is read the same way (``_unshared_pair``: a sine and a cosine of different angles). The checkers of
:mod:`posenc.exercises.rotary`, :mod:`posenc.exercises.rotary_2d`, :mod:`posenc.exercises.rotations` and
:mod:`posenc.exercises.sinusoidal` use these readings before they name a cause; everything here is private.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..rotary import apply_rope, rope_frequencies
from .checking import _EPS32, _num

__all__: list[str] = []

_HALF_ULP = 2.0 ** -7
"""Twice bfloat16's relative precision (8 significant bits): the largest error half precision leaves, relative."""


def _rope_bound(positions: torch.Tensor, strict: bool = False) -> torch.Tensor:
    """Per-token tolerance relative to the norm of the token: float32 rounding (+ float32 angles)."""
    if strict:  # float32 rounding of the result only: about 1e-7 of the norm
        return torch.full(positions.shape, 1e-6, dtype=torch.float64)
    return 1e-5 + 8 * _EPS32 * positions.double().abs()


def _token_errors(got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Error of every token relative to its norm, reduced to one value per position: ``(L,)``."""
    relative = (got - expected).norm(dim=-1) / x.double().norm(dim=-1).clamp(min=1e-12)
    return relative.reshape(-1, x.shape[-2]).max(dim=0).values.nan_to_num(float("inf"))


def _pairs(tensor: torch.Tensor, layout: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The two coordinates of every pair, ``(..., d/2)`` each: ``(2ℓ, 2ℓ + 1)`` interleaved, ``(ℓ, ℓ + d/2)`` halves."""
    tensor = tensor.double()
    if layout == "interleaved":
        return tensor[..., 0::2], tensor[..., 1::2]
    half = tensor.shape[-1] // 2
    return tensor[..., :half], tensor[..., half:]


def _pair_errors(got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor, layout: str) -> torch.Tensor:
    """The error of every pair relative to the norm of that pair of ``x`` (inf where the pair of ``x`` is 0)."""
    (ga, gb), (ea, eb), (xa, xb) = _pairs(got, layout), _pairs(expected, layout), _pairs(x, layout)
    norms = torch.hypot(xa, xb)
    errors = torch.hypot(ga - ea, gb - eb) / norms.clamp(min=1e-300)
    return torch.where(norms > 1e-9 * float(norms.max().clamp(min=1e-300)), errors, torch.zeros_like(errors))


def _rounding_sized(got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor, positions: torch.Tensor, base: float,
                    layout: str) -> bool:
    """Whether every pair is off by no more than half precision's rounding of its angle m θ_ℓ, its cosine and sine.

    A pair left unrotated, or turned by another angle, is off by about the whole angle, far more than
    ``2^-7 (|m θ_ℓ| + 2)``: such an answer is not read as one computed in half precision.
    """
    if _unrotated_pairs(got, expected, x, layout) is not None:  # exact elsewhere: not rounding, a slip
        return False
    angles = positions.double()[:, None].abs() * rope_frequencies(x.shape[-1], base).double()[None, :]
    return bool((_pair_errors(got, expected, x, layout) <= _HALF_ULP * (angles + 2)).all())


def _unrotated_pairs(got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor, layout: str) -> str | None:
    """The pairs the answer leaves as they are in ``x`` (every other pair right), said by their pair index."""
    right = _pair_errors(got, expected, x, layout) <= 1e-5
    unmoved = _pair_errors(got, x.double(), x, layout) <= 1e-5
    moving = _pair_errors(expected, x.double(), x, layout) > 1e-5  # pairs that the right answer turns
    wrong = ~right & moving
    if not bool(wrong.any()) or not bool((right | unmoved).all()):
        return None
    pairs = sorted({int(index) for index in wrong.nonzero()[:, -1]})
    count = x.shape[-1] // 2
    if pairs == list(range(count // 2, count)) and layout == "half":
        return None  # the halves reading of the checker says this one in its own words
    if pairs == [count - 1]:
        which = f"your last pair (ℓ = {count - 1}) is"
    elif pairs == [0]:
        which = "your first pair (ℓ = 0) is"
    else:
        which = f"your pairs ℓ = {', '.join(map(str, pairs[:8]))}{', ...' if len(pairs) > 8 else ''} are"
    coordinates = "(2ℓ, 2ℓ + 1)" if layout == "interleaved" else "(ℓ, ℓ + d/2)"
    return (f"{which} not rotated: the coordinates {coordinates} keep x's values, while every other pair is right: "
            f"all d/2 = {count} pairs turn, pair ℓ by m θ_ℓ (a slice or a loop that stops short of the last pair, or "
            "a frequency set to 0)")


def _row_sources(rows: torch.Tensor, cached: torch.Tensor, shifts: tuple[int, ...]) -> list[tuple[int, int]] | None:
    """For every row of ``rows`` (``(..., R, d)``): the cached key it is, and by how many positions it was moved back.

    A row is cached key ``j`` moved back by ``t`` when RoPE at ``+t`` turns it into key ``j`` (every head at once);
    ``t`` is tried among ``shifts``. None when some row is none of them.
    """
    if rows.shape[:-2] != cached.shape[:-2] or rows.shape[-1] != cached.shape[-1] or cached.shape[-2] > 4096:
        return None
    keys = cached.double().flatten(0, -3).transpose(0, 1).flatten(1)
    sources: list[tuple[int, int] | None] = [None] * rows.shape[-2]
    for shift in shifts:
        back = apply_rope(rows.double(), torch.full((rows.shape[-2],), shift)).flatten(0, -3).transpose(0, 1)
        distances = torch.cdist(back.flatten(1), keys)
        nearest = distances.argmin(dim=-1)
        for row in range(rows.shape[-2]):
            if sources[row] is None and float(distances[row, nearest[row]]) < 1e-3:
                sources[row] = (int(nearest[row]), shift)
    return None if any(source is None for source in sources) else [s for s in sources if s is not None]


def _cache_layout(got: torch.Tensor, cached: torch.Tensor, window: int, sinks: int) -> str | None:
    """What a streaming cache holds, row by row, when every row is a cached key unmoved or moved back by the shift."""
    total = cached.shape[-2]
    shift = total - window - sinks
    sources = _row_sources(got, cached, (0, shift))
    expected = [(j, 0) for j in range(sinks)] + [(j, shift) for j in range(total - window, total)]
    if sources is None or sources == expected:
        return None
    runs: list[list[tuple[int, int]]] = []
    for source in sources:
        if runs and source[1] == runs[-1][-1][1] and source[0] == runs[-1][-1][0] + 1:
            runs[-1].append(source)
        else:
            runs.append([source])
    parts, row = [], 0
    for run in runs:
        keys = f"{run[0][0]}..{run[-1][0]}" if len(run) > 1 else f"{run[0][0]}"
        how = "unmoved" if run[0][1] == 0 else f"moved back by {run[0][1]}"
        rows = f"{row}..{row + len(run) - 1}" if len(run) > 1 else f"{row}"
        parts.append(f"rows {rows} hold the keys at positions {keys}, {how}")
        row += len(run)
    return (f"your cache: {'; '.join(parts)}. It must hold the first sinks = {sinks} keys (0..{sinks - 1}) unmoved, "
            f"then the last window = {window} keys ({total - window}..{total - 1}), each moved back by n - window - "
            f"sinks = {shift}: count both parts from the arguments (cached[..., :sinks, :], cached[..., -window:, :])")


def _wrapped(angle: torch.Tensor) -> torch.Tensor:
    return torch.remainder(angle + torch.pi, 2 * torch.pi) - torch.pi


def _positions_used(got: torch.Tensor, x: torch.Tensor, base: float, layout: str,
                    near: torch.Tensor | None = None) -> torch.Tensor | None:
    """The position each token of the answer is turned by, when the answer is RoPE of ``x`` at some positions.

    Every pair ℓ of token t is turned by an angle ψ_tℓ; the slowest pair gives a position p_t = ψ / θ_slowest (its
    angle stays within ±π for the positions of most exercises), and the answer is RoPE at p_t when every pair's angle
    is p_t θ_ℓ. For far positions, ``near`` (the positions the tokens have) unwraps the slowest angle around them.
    None when it is not (another frequency, a pair not a rotation), or when a pair of ``x`` is near 0.
    """
    (xa, xb), (ga, gb) = _pairs(x, layout), _pairs(got, layout)
    norms = torch.hypot(xa, xb)
    if bool((norms < 1e-6).any()) or not torch.allclose(torch.hypot(ga, gb), norms, rtol=1e-6, atol=1e-9):
        return None
    angles = torch.atan2(xa * gb - xb * ga, xa * ga + xb * gb)  # (..., L, d/2): how far each pair turned
    theta = rope_frequencies(x.shape[-1], base).double()
    positions = angles[..., -1] / theta[-1]
    if near is not None:  # the slowest angle unwrapped around the right one: deviations up to π / θ_slowest
        around = near.double() * theta[-1]
        positions = (around + _wrapped(angles[..., -1] - around)) / theta[-1]
    for pair in range(theta.shape[0] - 2, -1, -1):  # refined by ever faster pairs, each unwrapped around the estimate
        positions = positions + _wrapped(angles[..., pair] - positions * theta[pair]) / theta[pair]
    flat = positions.reshape(-1, positions.shape[-1])
    if not bool((flat - flat[0]).abs().max() < 1e-4):
        return None  # tokens at the same place in different rows of a batch turned differently: not one position each
    if not bool((_wrapped(positions[..., None] * theta - angles).abs() < 1e-4).all()):
        return None
    return flat[0]


def _positions_text(used: torch.Tensor, expected: torch.Tensor, what: str = "your rotation turns") -> str | None:
    """``used`` said against the positions the tokens have, when every token is turned by its own wrong amount."""
    if used.shape != expected.shape or torch.allclose(used, expected.double(), atol=1e-6):
        return None

    def shown(values: torch.Tensor) -> str:
        items = [f"{round(v, 6) + 0.0:.8g}" for v in values.tolist()[:6]]
        return "[" + ", ".join(items) + (", ...]" if len(values) > 6 else "]")

    rounded = next((name for name, dtype in (("float16 (half precision)", torch.float16), ("bfloat16", torch.bfloat16),
                                             ("float32", torch.float32))
                    if torch.allclose(used, expected.to(dtype).double(), atol=1e-6, rtol=1e-9)), None)
    precision = (f": these are your positions rounded to {rounded}, so the positions (or the angles) are computed in "
                 "that precision somewhere; keep them in float64 (or float32 for small positions)") if rounded else ""
    return (f"{what} the tokens by the positions {shown(used)} (read from the angle of every pair), where their "
            f"positions are {shown(expected.double())}{precision}: token t must turn by its own position, pair ℓ by "
            "positions[t] θ_ℓ")


def _pairing(fn: Callable[..., Any], dim: int, layout: str) -> str | None:
    """Which coordinates the student's RoPE turns together, read by rotating the basis vectors (RoPE is linear in x).

    Each basis vector e_c, at position 1, comes back as a combination of e_c and of the coordinate it is paired with;
    the pairs found are said when they are not the layout's and every coordinate has a partner.
    """
    basis = torch.eye(dim, dtype=torch.float64)
    try:
        turned = torch.as_tensor(fn(basis, torch.ones(dim, dtype=torch.float64))).double()
    except Exception:  # noqa: BLE001 (an answer that cannot take this input: no reading)
        return None
    if turned.shape != (dim, dim):
        return None
    partners = []
    for c in range(dim):
        others = turned[c].clone()
        others[c] = 0
        partner = int(others.abs().argmax())
        if float(others.abs().max()) < 1e-9:
            partner = c  # not turned at all
        rest = others.clone()
        rest[partner] = 0
        if float(rest.abs().max()) > 1e-9:
            return None  # a coordinate mixed with more than one other: not a rotation of pairs
        partners.append(partner)
    expected = [c ^ 1 for c in range(dim)] if layout == "interleaved" else [(c + dim // 2) % dim for c in range(dim)]
    if partners == expected or any(partners[p] != c or p == c for c, p in enumerate(partners)):
        return None  # a coordinate left alone may be an angle that is 0 at position 1 (rounded, or a slow pair)
    pairs = sorted({tuple(sorted((c, p))) for c, p in enumerate(partners)})
    shown = ", ".join(f"({a}, {b})" for a, b in pairs[:6])
    right = ("(2ℓ, 2ℓ + 1): (0, 1), (2, 3), ..." if layout == "interleaved" else
             "(ℓ, ℓ + d/2): (0, d/2), (1, d/2 + 1), ...")
    return (f"your function turns these coordinates together (read by rotating each basis vector e_c at position 1, "
            f"d = {dim}): {shown}{', ...' if len(pairs) > 6 else ''}; the {layout} layout pairs {right}")


def _pairs_axes(got: torch.Tensor, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor,
                base: float) -> str | None:
    """Which interleaved pairs (2p, 2p + 1) turn at the row and which at the column, when not the two halves.

    A pair is read as following an axis when it is x's pair turned by that axis's positions times some
    frequency of 1-D RoPE (of dimension d/2 or d); said only when every pair follows exactly one axis.
    """
    dim = x.shape[-1]
    if got.shape != x.shape or dim % 4 or torch.equal(rows.double(), columns.double()):
        return None
    frequencies = torch.cat((rope_frequencies(dim // 2, base), rope_frequencies(dim, base))).double()
    axes = []
    for pair in range(dim // 2):
        followed = set()
        for name, where in (("row", rows), ("column", columns)):
            for theta in frequencies:
                turned = apply_rope(x[..., 2 * pair : 2 * pair + 2], where, frequencies=theta[None])
                if bool(torch.allclose(got[..., 2 * pair : 2 * pair + 2], turned, atol=1e-5, rtol=1e-5)):
                    followed.add(name)
                    break
        if len(followed) != 1:
            return None
        axes.append(followed.pop())
    right = ["row"] * (dim // 4) + ["column"] * (dim // 4)
    if axes == right:
        return None

    def coordinates(axis: str) -> str:
        return ", ".join(f"{2 * p}-{2 * p + 1}" for p, name in enumerate(axes) if name == axis) or "none"

    blocks = " (they alternate in pairs between the row and the column, blocks of four)" if axes == [
        "row", "column"] * (dim // 4) else ""
    return (f"your coordinates {coordinates('row')} turn at the row and {coordinates('column')} at the column"
            f"{blocks}: the first d/2 coordinates all turn at the row and the last d/2 at the column, split with "
            "x[..., :d/2] and x[..., d/2:]")


def _halves_positions(got: torch.Tensor, x: torch.Tensor, rows: torch.Tensor, columns: torch.Tensor,
                      base: float) -> str | None:
    """Axial 2-D RoPE read pair by pair (which pairs follow the row, which the column), else half by half."""
    by_pairs = _pairs_axes(got, x, rows, columns, base)
    if by_pairs is not None:
        return by_pairs
    half = x.shape[-1] // 2
    said = []
    for name, part, where in (("first half (rows)", slice(0, half), rows), ("second half (columns)",
                                                                          slice(half, 2 * half), columns)):
        used = _positions_used(got[..., part], x[..., part], base, "interleaved")
        text = _positions_text(used, where, f"your {name} turns") if used is not None else None
        if text is not None:
            said.append(text)
    return "; ".join(said) or None


def _unshared_pair(got: torch.Tensor, dim: int) -> str | None:
    """Whether the sine and the cosine of some pair run at different frequencies, read off rows 0 and 1."""
    if got.shape[0] < 2 or dim < 2:
        return None
    first, second = got[0], got[1]
    sine = first.abs() < 1e-6
    cosine = (first - 1).abs() < 1e-6
    frequency = torch.where(sine, torch.asin(second.clamp(-1, 1)), torch.acos(second.clamp(-1, 1)))
    for ell in range(dim // 2):
        even, odd = 2 * ell, 2 * ell + 1
        if not (bool(sine[even]) and bool(cosine[odd])):
            return None
        one_angle = abs(float(second[even]) ** 2 + float(second[odd]) ** 2 - 1) < 1e-4  # asin, acos differ past π/2
        if not one_angle and not math.isclose(float(frequency[even]), float(frequency[odd]), rel_tol=1e-4,
                                              abs_tol=1e-7):
            return (f"the columns {even} (sine) and {odd} (cosine) of pair ℓ = {ell} run at different frequencies, "
                    f"{_num(float(frequency[even]))} and {_num(float(frequency[odd]))} per position: a pair's sine "
                    "and cosine share one frequency θ_ℓ, whose exponent is 2ℓ/dim for both columns 2ℓ and 2ℓ+1")
    return None
