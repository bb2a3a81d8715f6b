"""Checkers of the exercises on additive biases: ALiBi built from its slopes, ALiBi at real
positions, and the reversal test of a bias-only encoder.

- :func:`~posenc.exercises.check_alibi_bias_from_slopes` (ex-rel-4): the causal bias ``m_r (j - i)``;
- :func:`~posenc.exercises.check_reversal_gap` (ex-rel-8): how far a layer is from reversal
  equivariance;
- :func:`~posenc.exercises.check_alibi_bias_at_positions` (ex-trained-3): ``-m_r |p_j - p_i|`` at
  real (possibly fractional) positions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import torch

from ..relative import alibi_slopes
from .checking import CheckResult, _close, _num, _public
from .comparing import _Case, _Mistake, _reduction, _simple_checker

__all__ = ["check_alibi_bias_at_positions", "check_alibi_bias_from_slopes", "check_reversal_gap"]


def _slopes(heads: int) -> torch.Tensor:
    return 2.0 ** (-8.0 * torch.arange(1, heads + 1, dtype=torch.float64) / heads)


# --------------------------------------------------------------------------- ex-rel-4


def reference_alibi_bias_from_slopes(slopes, length):
    """The causal ALiBi bias m_r (j - i), shape (h, n, n)."""
    positions = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None, None] * (positions[None, :] - positions[:, None])


def _offsets(length: int) -> torch.Tensor:
    positions = torch.arange(length, dtype=torch.float64)
    return positions[None, :] - positions[:, None]


def _visible(values: torch.Tensor, case: _Case) -> torch.Tensor:
    length = values.shape[-1]
    hidden = torch.ones(length, length, dtype=torch.bool).triu(1)
    return values.masked_fill(hidden, 0.0)


_FROM_SLOPES_MISTAKES = [
    _Mistake("alibi sign", "your bias has the wrong sign on the visible entries: m_r (j - i) is negative for keys "
             "before the query (j < i), a penalty that grows with the distance; yours is m_r (i - j) (a bias "
             "transposed, rows and columns exchanged, gives the same numbers)",
             lambda m, n: m.double()[:, None, None] * -_offsets(n)),
    _Mistake("alibi key only", "you built the key-only bias m_r j: it gives the same attention weights under a "
             "causal mask, but part 1 asks for m_r (j - i) itself",
             lambda m, n: m.double()[:, None, None] * torch.arange(n, dtype=torch.float64).expand(n, n)),
    _Mistake("alibi no slopes", "your bias does not use the slopes: head r multiplies the offsets j - i by its "
             "slope m_r (slopes[:, None, None])",
             lambda m, n: _offsets(n).expand(len(m), n, n)),
    _Mistake("alibi key axis", "you broadcast the slopes along the key axis (slopes[None, None, :]): the slope "
             "belongs to the head, the first axis (slopes[:, None, None])",
             lambda m, n: m.double()[None, None, :] * _offsets(n)),
    _Mistake("alibi divided", "you divided the offsets by the slopes: the bias is the slope times the offset",
             lambda m, n: _offsets(n) / m.double()[:, None, None]),
    _Mistake("alibi heads reversed", "your heads are in the reverse order: head r must use slopes[r], the "
             "slopes in the order they are given",
             lambda m, n: m.double().flip(0)[:, None, None] * _offsets(n)),
    *(_Mistake("alibi own slopes", "your bias ignores the slopes it is given and recomputes ALiBi's own (2^(-8(r+1)/h) "
               "for h a power of two, completed from the next power of two otherwise): use the slopes argument, which "
               "need not follow that rule (other head counts, learned slopes)",
               lambda m, n, rule=rule: rule(len(m)).double()[:, None, None] * _offsets(n))
      for rule in (_slopes, alibi_slopes)),
    _Mistake("alibi heads last", "your heads are on the last axis, (n, n, h): the bias has shape (h, n, n), one "
             "(n, n) matrix per head, slopes[:, None, None] * (j - i)",
             lambda m, n: (_offsets(n)[:, :, None] * m.double()).contiguous()),
]


def _from_slopes_cases(generator: torch.Generator) -> list[_Case]:
    cases = [_Case((_slopes(h).float(), n), f"fn(slopes of {h} heads, "
        f"length={n})") for h, n in [(4, 6), (8, 5), (4, 4), (12, 9)]]
    # Slopes that do not follow ALiBi's rule (learned ones, in no order): a bias that recomputes them fails.
    for h, n in [(6, 7), (3, 5)]:
        slopes = (0.05 + 0.9 * torch.rand(h, generator=generator, dtype=torch.float64)).float()
        cases.append(_Case((slopes, n), f"fn(slopes {[round(v, 3) for v in slopes.tolist()]}, length={n})"))
    return cases


def _per_head_scale(got: torch.Tensor, expected: torch.Tensor, slopes: torch.Tensor) -> str | None:
    """Each head's bias a constant times the expected one, a different constant per head: which slope each got."""
    got, expected, slopes = got.double(), expected.double(), slopes.double()
    if got.dim() != 3 or got.shape[0] < 2:
        return None
    ratios = []
    for head in range(got.shape[0]):
        big = expected[head].abs() > 1e-12
        if not bool(big.any()) or not bool((got[head][~big].abs() < 1e-12).all()):
            return None
        ratio = got[head][big] / expected[head][big]
        if not bool(torch.allclose(ratio, ratio[0].expand_as(ratio), rtol=1e-6, atol=0.0)):
            return None
        ratios.append(float(ratio[0]))
    scales = torch.tensor(ratios, dtype=torch.float64)
    if bool(torch.allclose(scales, scales[0].expand_as(scales), rtol=1e-6)) or bool(((scales - 1).abs() < 4e-3).all()):
        return None  # one factor for every head (a constant factor), or slopes rounded: said elsewhere
    heads = torch.arange(1, len(ratios) + 1, dtype=torch.float64)
    only = "the head's own slope m_r is the only per-head factor"
    readings = [(slopes, "each head's slope is applied twice: your bias is m_r² times the distance term; multiply by "
                 "the slope once"),
                (heads, f"head r's bias is multiplied by its number r + 1 (1, 2, 3, ...): {only}"),
                (heads - 1, f"head r's bias is multiplied by its index r (0, 1, 2, ...): {only}")]
    for value, text in readings:
        if bool(torch.allclose(scales, value, rtol=1e-6, atol=1e-12)):
            return text
    shown = ", ".join(f"{ratio:.4g}" for ratio in ratios[:6])
    return (f"each head's bias is a constant times the expected one, but a different constant per head ({shown}"
            f"{', ...' if len(ratios) > 6 else ''}): head r must be multiplied by its own slope slopes[r] and nothing "
            "else")


def _distance_law(got: torch.Tensor, slopes: torch.Tensor, distance: torch.Tensor, seen: torch.Tensor) -> str | None:
    """How each head's penalty grows with the distance, when it is a power of it other than the first."""
    penalty = got.double().abs() / slopes.double().abs()[:, None, None]
    far = seen & (distance > 1.5)
    if not bool(far.any()):
        return None
    powers = torch.log(penalty[far]) / torch.log(distance[far])
    power = float(powers.flatten()[0])
    if abs(power - 1) > 1e-3 and bool(torch.allclose(powers, torch.full_like(powers, power), atol=1e-6)):
        law = "the square of the distance" if abs(power - 2) < 1e-3 else f"the distance to the power {power:.3g}"
        return (f"your penalty grows as {law}: ALiBi's penalty is linear in the distance, the slope times "
                "|p_j - p_i|")
    return None


def _per_offset(got: torch.Tensor, slopes: torch.Tensor, offsets: torch.Tensor, seen: torch.Tensor) -> str | None:
    """Each head's bias divided by its slope, when it is one function of the offset j - i: said at a few offsets."""
    ratio = got.double() / slopes.double()[:, None, None]
    values: dict[int, float] = {}
    for offset in sorted({int(o) for o in offsets[seen].unique()}, key=abs)[:4]:
        at = ratio[:, offsets == offset]
        if not bool(torch.allclose(at, at.flatten()[0].expand_as(at), atol=1e-6)):
            return None
        values[offset] = float(at.flatten()[0])
    if all(math.isclose(value, offset, abs_tol=1e-6) for offset, value in values.items()):
        return None
    shown = ", ".join(f"{value:g} at j - i = {offset}" for offset, value in values.items())
    return (f"divided by its head's slope, your bias is {shown}: it must be the offset j - i itself (the signed "
            "distance, 0 on the diagonal)")


def _from_slopes_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    slopes, length = case.args
    offsets = _offsets(length)
    seen = offsets <= 0
    if got.shape != expected.shape or not bool(torch.isfinite(got[:, seen]).all()):
        return None
    counted = _reduction(got, expected, {"the length n": length})
    if counted:
        return f"your bias is {counted}: ALiBi's bias is m_r (j - i) itself, not normalised by the length"
    law = _distance_law(got, slopes, offsets.abs().expand_as(got), (offsets < 0).expand_as(got))
    return law or _per_head_scale(got, expected, slopes) or _per_offset(got, slopes, offsets, seen)


_PER_HEAD = ("the slopes belong to the heads, the first axis of the (h, n, n) bias: give them two trailing axes, "
             "slopes[:, None, None] * (j - i)[None], so that each head gets its own (n, n) matrix")


@_public
def check_alibi_bias_from_slopes(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(slopes, length)``: the causal ALiBi bias ``m_r (j - i)``, shape ``(h, n, n)``.

    Only the visible entries ``j <= i`` are compared (within 1e-5): above the diagonal any value,
    ``-inf`` included, is accepted. Some hidden slopes do not follow ALiBi's rule. Named mistakes:
    the sign, the key-only form ``m_r j``, slopes missing, broadcast on the key axis, dividing by
    them, heads in reverse order, ALiBi's own slopes instead of the given ones, heads on the last
    axis. Otherwise the law of the penalty in the distance is read off (squared, any power), and a
    broadcast that misses the head axis is explained.
    """
    return _simple_checker(
        "ALiBi bias from slopes", fn, _from_slopes_cases, reference_alibi_bias_from_slopes, _FROM_SLOPES_MISTAKES,
        ["m_r (j - i) on every visible entry (j <= i), for 6 hidden sets of slopes (2 not ALiBi's) and lengths; "
         "entries above the diagonal are not checked (the causal mask hides them), so -m_r |j - i| passes too"],
        what="the bias", view=_visible, properties=[_from_slopes_property], axes=_PER_HEAD,
    )


# --------------------------------------------------------------------------- ex-rel-8


def reference_reversal_gap(layer, x):
    """max |layer(x reversed) - layer(x) reversed|, the reversal being along the positions (dim 0)."""
    reversal = torch.arange(x.shape[0] - 1, -1, -1)
    return (layer(x[reversal]) - layer(x)[reversal]).abs().max().item()


class _Layer:
    """A small attention layer on (L, d) inputs; ``kind`` chooses its position signal."""

    def __init__(self, kind: str, dim: int, generator: torch.Generator) -> None:
        self.kind = kind
        self.w = torch.randn(3, dim, dim, generator=generator, dtype=torch.float64) / math.sqrt(dim)
        self.table = torch.randn(64, dim, generator=generator, dtype=torch.float64)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        x = x.double()
        length = x.shape[0]
        offsets = _offsets(length)
        if self.kind == "absolute":
            x = x + self.table[:length]
        q, k, v = (x @ w for w in self.w)
        scores = q @ k.T
        if self.kind == "symmetric":
            scores = scores - 0.5 * offsets.abs()
        if self.kind == "causal":
            scores = scores - 0.5 * offsets.abs()
            scores = scores.masked_fill(offsets > 0, float("-inf"))
        return torch.softmax(scores, -1) @ v

    def __repr__(self) -> str:
        return f"<{self.kind} layer>"


def _reversal(x: torch.Tensor) -> torch.Tensor:
    return torch.arange(x.shape[0] - 1, -1, -1)


_REVERSAL_MISTAKES = [
    _Mistake("reversal output not reversed", "you compared layer(x reversed) with layer(x) itself: reverse the "
             "output too, layer(x)[reversal], since an equivariant layer reverses its output",
             lambda f, x: (f(x[_reversal(x)]) - f(x)).abs().max().item()),
    _Mistake("reversal input not reversed", "you compared layer(x) with layer(x)[reversal]: feed the reversed "
             "input, layer(x[reversal])",
             lambda f, x: (f(x) - f(x)[_reversal(x)]).abs().max().item()),
    _Mistake("reversal features", "you reversed the feature axis (x.flip(-1)): the reversal permutes the "
             "positions, the first axis of an (L, d) input",
             lambda f, x: (f(x.flip(-1)) - f(x).flip(-1)).abs().max().item()),
    _Mistake("reversal mean", "you returned the mean absolute gap: the test uses the largest, max |...|",
             lambda f, x: (f(x[_reversal(x)]) - f(x)[_reversal(x)]).abs().mean().item()),
    _Mistake("reversal signed", "you returned the largest signed difference: take the absolute value first, "
             "max |layer(x reversed) - layer(x) reversed|",
             lambda f, x: (f(x[_reversal(x)]) - f(x)[_reversal(x)]).max().item()),
    _Mistake("reversal norm", "you returned the norm of the difference (torch.norm, the square root of the sum "
             "of squares): the test uses the largest entry, max |layer(x reversed) - layer(x) reversed|",
             lambda f, x: (f(x[_reversal(x)]) - f(x)[_reversal(x)]).norm().item()),
    _Mistake("reversal sum", "you returned the sum of the absolute differences: the test uses the largest one, "
             "max |...|",
             lambda f, x: (f(x[_reversal(x)]) - f(x)[_reversal(x)]).abs().sum().item()),
]


_REDUCTIONS = {
    "mean square": lambda d: (d**2).mean(), "root mean square": lambda d: (d**2).mean().sqrt(),
    "largest square": lambda d: (d**2).max(), "sum of squares": lambda d: (d**2).sum(),
    "mean absolute value": lambda d: d.abs().mean(), "sum of absolute values": lambda d: d.abs().sum(),
    "norm (the square root of the sum of squares)": lambda d: d.norm(), "largest signed value": lambda d: d.max(),
    "largest row norm": lambda d: d.norm(dim=-1).max(), "mean row norm": lambda d: d.norm(dim=-1).mean(),
    "median absolute value": lambda d: d.abs().median(), "smallest absolute value": lambda d: d.abs().min(),
}


_STAGES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "max": lambda t: t.amax(dim=-1), "mean": lambda t: t.mean(dim=-1), "sum": lambda t: t.sum(dim=-1),
}
"""Reductions over the last axis: features first, then positions."""


def _reversal_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Which reduction of the differences the answer is, when it is not the largest absolute one."""
    layer, x = case.args
    reversal = _reversal(x)
    differences = (layer(x[reversal]) - layer(x)[reversal]).double()
    value = float(got)
    for inner, outer in itertools.product(_STAGES, _STAGES):
        if (inner, outer) == ("max", "max"):
            continue
        staged = _STAGES[outer](_STAGES[inner](differences.abs()))
        if math.isclose(value, float(staged), rel_tol=1e-5, abs_tol=1e-9):
            return (f"your gap is the {outer} over the positions of the {inner} over the features of |layer(x "
                    "reversed) - layer(x) reversed|: the test uses the largest entry over both, .abs().max()")
    for name, reduce in _REDUCTIONS.items():
        if math.isclose(value, float(reduce(differences)), rel_tol=1e-5, abs_tol=1e-9):
            return (f"your gap is the {name} of the differences layer(x reversed) - layer(x) reversed: the test uses "
                    "their largest absolute entry, max |...| (.abs().max())")
    return None


def _reversal_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    for kind, length, dim in [("absolute", 6, 8), ("symmetric", 7, 8), ("causal", 5, 4), ("absolute", 9, 4)]:
        x = torch.randn(length, dim, generator=generator, dtype=torch.float64)
        cases.append(_Case((_Layer(kind, dim, generator), x), f"fn(layer with {kind} positions, x: ({length}, {dim}))"))
    return cases


@_public
def check_reversal_gap(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(layer, x)``: ``max |layer(x[reversal]) - layer(x)[reversal]|`` for an ``(L, d)`` input.

    ``layer`` maps an ``(L, d)`` tensor to an ``(L, d)`` tensor; the answer is a number, within 1e-6.
    The hidden layers include one that is reversal equivariant (a symmetric bias: gap 0) and some
    that are not. Named mistakes: the output or the input not reversed, the feature axis reversed,
    the mean, the signed gap, the norm or the sum of the differences instead of the largest one;
    otherwise which reduction the number is (a mean square, a maximum of row means, ...).
    """
    return _simple_checker(
        "reversal gap", fn, _reversal_cases, reference_reversal_gap, _REVERSAL_MISTAKES,
        ["the gap is right for an equivariant layer (0) and for three layers that are not"],
        what="the gap", atol=1e-6, rtol=1e-5, properties=[_reversal_property],
    )


# --------------------------------------------------------------------------- ex-trained-3


def reference_alibi_bias_at_positions(slopes, positions):
    """-m_r |p_j - p_i| at real positions p, shape (h, n, n)."""
    p = positions.double()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def _at(slopes, positions, transform=lambda p: p, sign=-1.0, absolute=True, use_slopes=True):
    p = transform(positions).double()
    offsets = p[None, :] - p[:, None]
    offsets = offsets.abs() if absolute else offsets
    m = slopes.double() if use_slopes else torch.ones(len(slopes), dtype=torch.float64)
    return sign * m[:, None, None] * offsets


_AT_MISTAKES = [
    _Mistake("alibi integer positions", "you converted the positions to integers (.long() or .int()), which "
             "truncates fractional positions such as 0.25 i: keep them real (float)",
             lambda m, p: _at(m, p, transform=lambda q: q.long())),
    _Mistake("alibi index positions", "your bias uses the indices 0, ..., L-1 instead of the given positions: the "
             "offsets are p_j - p_i",
             lambda m, p: _at(m, p, transform=lambda q: torch.arange(len(q)))),
    _Mistake("alibi no abs", "your bias is m_r (p_j - p_i), the causal form without the absolute value: this "
             "exercise's bias is -m_r |p_j - p_i| (symmetric)",
             lambda m, p: _at(m, p, sign=1.0, absolute=False)),
    _Mistake("alibi signed offsets", "your bias is -m_r (p_j - p_i), without the absolute value: for keys before "
             "the query (p_j < p_i) it becomes a reward; this bias is -m_r |p_j - p_i|, a penalty on both sides",
             lambda m, p: _at(m, p, absolute=False)),
    _Mistake("alibi positive", "your bias is +m_r |p_j - p_i|: ALiBi subtracts, a penalty growing with distance",
             lambda m, p: _at(m, p, sign=1.0)),
    _Mistake("alibi slopes missing", "your bias does not use the slopes: multiply head r's distances by m_r",
             lambda m, p: _at(m, p, use_slopes=False)),
    _Mistake("alibi scaled twice", "you scaled twice: at positions c i the bias is already that of slopes c m_r; "
             "multiply either the positions or the slopes by c, not both",
             lambda m, p: _at(m, p) * (p[1] - p[0]).item()),
    _Mistake("alibi own slopes at positions", "your bias ignores the slopes it is given and recomputes ALiBi's "
             "2^(-8(r+1)/h): use the slopes argument, which need not follow that rule",
             lambda m, p: _at(_slopes(len(m)), p)),
    _Mistake("alibi squared", "you squared the distance, (p_j - p_i)^2: ALiBi's penalty is linear in the "
             "distance, -m_r |p_j - p_i|",
             lambda m, p: _at(m, p, transform=lambda q: q) * (p[None, :] - p[:, None]).abs().double()),
    _Mistake("alibi at positions heads last", "your heads are on the last axis, (n, n, h): the bias has shape "
             "(h, n, n), slopes[:, None, None] * ...",
             lambda m, p: _at(m, p).permute(1, 2, 0).contiguous()),
]


_INTEGER = {"rounded (round)": torch.round, "floored (floor)": torch.floor, "truncated (.long(), int)": torch.trunc,
            "rounded up (ceil)": torch.ceil}


def _at_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Which positions the bias was computed at, and how it grows with their distance."""
    slopes, positions = case.args
    p = positions.double()
    if got.shape != expected.shape or not bool(torch.isfinite(got).all()):
        return None
    diagonal = got.double().diagonal(dim1=-2, dim2=-1)
    if bool((diagonal.abs() > 1e-9).any()):
        head, token = (int(i) for i in (diagonal.abs() > 1e-9).nonzero()[0])
        return (f"your bias is {_num(float(diagonal[head, token]))} on the diagonal (head {head}, token {token} with "
                "itself): a token's distance to itself is 0, so the bias must be 0 there; it depends on the positions "
                "only through their difference p_j - p_i")
    for name, integer in _INTEGER.items():
        if not bool(torch.equal(integer(p), p)) and _close(got, _at(slopes, p, transform=integer)):
            return (f"your bias is right at the positions {name} to integers: positions here are real numbers "
                    "(fractional, such as 0.25 i): keep them as they are, in floating point")
    for name, order in (("sorted", p.sort().values), ("reversed", p.flip(0))):
        if not bool(torch.equal(order, p)) and _close(got, _at(slopes, order)):
            return (f"your bias is that of the positions {name}: row i and column j belong to the tokens at p_i and "
                    "p_j in the order given, which need not be increasing; keep that order")
    for name, scale in (("largest position", float(p.abs().max())), ("last position", float(p[-1])),
                        ("number of positions", float(len(p))), ("span p_max - p_min", float(p.max() - p.min()))):
        if scale not in (0.0, 1.0) and _close(got, _at(slopes, p / scale)):
            return (f"your positions are divided by the {name} ({scale:g}): ALiBi's penalty uses the distances "
                    "|p_j - p_i| of the positions as they are given, not normalised ones")
    index = torch.arange(len(p), dtype=torch.float64)
    if len(p) > 2:
        mean = float(p[-1] - p[0]) / (len(p) - 1)
        if not bool(torch.allclose(p, p[0] + mean * index)) and _close(got, _at(slopes, mean * index)):
            return ("your bias is that of evenly spaced positions, the index offset times the mean spacing "
                    "(p_last - p_0)/(n - 1): the given positions need not be evenly spaced; use p_j - p_i itself")
        spacing = float(p[1] - p[0])
        if not bool(torch.allclose(p, p[0] + spacing * index)) and _close(got, _at(slopes, spacing * index)):
            return ("your bias is that of evenly spaced positions p_0 + k (p_1 - p_0): it depends only on the index "
                    "offset j - i, but the given positions need not be evenly spaced: use p_j - p_i itself")
    distance = (p[None, :] - p[:, None]).abs()
    return (_distance_law(got, slopes, distance.expand_as(got), (distance > 0).expand_as(got))
            or _per_head_scale(got, expected, slopes))


def _at_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    for h, n, c in [(4, 6, 0.25), (8, 5, 2.0), (2, 7, 0.5), (4, 4, 1.5)]:
        positions = c * torch.arange(n, dtype=torch.float32)
        cases.append(_Case((_slopes(h), positions), f"fn(slopes of {h} heads, positions={c:g} * arange({n}))"))
    # Slopes that do not follow ALiBi's rule, at positions that do not start at 0, then unevenly spaced.
    slopes = 0.05 + 0.9 * torch.rand(3, generator=generator, dtype=torch.float64)
    positions = 100.0 + 0.75 * torch.arange(6, dtype=torch.float32)
    cases.append(_Case((slopes, positions), f"fn(slopes {[round(v, 3) for v in slopes.tolist()]}, "
                       "positions=100 + 0.75 * arange(6))"))
    uneven = torch.tensor([0.0, 0.5, 2.0, 2.25, 5.0, 9.5], dtype=torch.float32)
    cases.append(_Case((_slopes(4), uneven), f"fn(slopes of 4 heads, positions={uneven.tolist()})"))
    # Positions in no particular order (tokens gathered from a packed batch): the answer must follow the given order.
    unordered = torch.tensor([3.0, 0.5, 7.25, 2.0, 1.0], dtype=torch.float32)
    cases.append(_Case((_slopes(2), unordered), f"fn(slopes of 2 heads, positions={unordered.tolist()})"))
    return cases


@_public
def check_alibi_bias_at_positions(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(slopes, positions)``: ALiBi's bias ``-m_r |p_j - p_i|`` at real positions, ``(h, n, n)``.

    Hidden positions are ``c * arange(L)`` for scales ``c`` such as 0.25 and 2, one set that
    starts at 100 with slopes that do not follow ALiBi's rule, one unevenly spaced set and one in no
    particular order (within 1e-5). Named mistakes:
    integer positions, indices instead of positions, the causal form without ``|.|``, the signed
    offsets ``-m_r (p_j - p_i)``, the sign, slopes missing, the scale applied twice, ALiBi's own
    slopes instead of the given ones, the distance squared, heads on the last axis; otherwise
    positions rounded, floored or made evenly spaced, and the law of the penalty in the distance.
    """
    return _simple_checker(
        "ALiBi bias at real positions", fn, _at_cases, reference_alibi_bias_at_positions, _AT_MISTAKES,
        ["-m_r |p_j - p_i| at fractional, integer-spaced, uneven and unordered positions for 7 hidden settings, "
         "given slopes used"],
        what="the bias", properties=[_at_property], axes=_PER_HEAD,
    )
