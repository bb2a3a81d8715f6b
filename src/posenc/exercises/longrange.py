"""Checkers of the coding exercises of chapter 7 (RoPE over long ranges).

- :func:`~posenc.exercises.check_slowest_wavelength` (ex-ropec-1): ``2π b^(1 - 2/d)``;
- :func:`~posenc.exercises.check_expected_score` (ex-ropec-2): the expected score from the per-pair
  cross-covariances;
- :func:`~posenc.exercises.check_score_asymmetry` (ex-ropec-3): ``s(δ) - s(-δ)``;
- :func:`~posenc.exercises.check_positional_head_query` (ex-ropec-5): a query whose score peaks at
  a chosen offset (any query that does so passes).

Scores are ``s(δ) = q^T R_δ k`` in the interleaved layout with ``θ_ℓ = b^(-2ℓ/d)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..rotary import apply_rope
from ._angles import _unrotated_pairs
from .checking import CheckResult, _close, _public
from .comparing import _Case, _ladder_slip, _Mistake, _reduction, _simple_checker

__all__ = [
    "check_expected_score",
    "check_positional_head_query",
    "check_score_asymmetry",
    "check_slowest_wavelength",
]


def _theta(dim: int, base: float) -> torch.Tensor:
    return base ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim)


# --------------------------------------------------------------------------- ex-ropec-1


def reference_slowest_wavelength(dim, base):
    """The wavelength of pair d/2 - 1: 2π b^(1 - 2/d)."""
    import math

    return 2 * math.pi * base ** (1 - 2 / dim)


_WAVELENGTH_MISTAKES = [
    _Mistake("wavelength 2 pi b", "you returned 2π b: the slowest pair is ℓ = d/2 - 1, whose frequency is "
             "b^(-2(d/2-1)/d) = b^(-1 + 2/d), so its wavelength is 2π b^(1 - 2/d)",
             lambda d, b: 2 * math.pi * b),
    _Mistake("wavelength frequency", "you returned the frequency θ_(d/2-1) = b^(-1 + 2/d): the wavelength is "
             "2π divided by it",
             lambda d, b: b ** (-1 + 2 / d)),
    _Mistake("wavelength no 2 pi", "your wavelength lacks the factor 2π: one turn is an angle of 2π, so λ = 2π/θ",
             lambda d, b: b ** (1 - 2 / d)),
    _Mistake("wavelength pair before", "your wavelength is that of pair d/2 - 2, 2π b^(1 - 4/d): an index off by one, "
             "or d/2 used as the dimension in 2/d; the slowest pair is the last, ℓ = d/2 - 1, of a dimension d, "
             "2π b^(1 - 2/d)",
             lambda d, b: 2 * math.pi * b ** (1 - 4 / d)),
    _Mistake("wavelength fastest", "you returned the wavelength of the fastest pairs: the slowest pair is the "
             "last one, with the smallest frequency",
             lambda d, b: 2 * math.pi * b ** (2 / d)),
    _Mistake("wavelength exponent two", "your exponent lacks the factor 2: pair ℓ has frequency b^(-2ℓ/d), so the "
             "last pair's wavelength is 2π b^(2(d/2-1)/d) = 2π b^(1 - 2/d)",
             lambda d, b: 2 * math.pi * b ** ((d / 2 - 1) / d)),
    _Mistake("wavelength precedence", "your wavelength is 2π b - 2/d, as 2 * pi * base ** 1 - 2 / dim computes: the "
             "exponent lost its parentheses, so ** took the 1 alone; write base ** (1 - 2 / dim)",
             lambda d, b: 2 * math.pi * b - 2 / d),
    _Mistake("wavelength power of 2 pi", "your wavelength is (2π b)^(1 - 2/d): the power applies to 2π as well, as "
             "(2 * pi * base) ** (1 - 2 / dim) computes; only the base is raised, 2π b^(1 - 2/d)",
             lambda d, b: (2 * math.pi * b) ** (1 - 2 / d)),
    _Mistake("wavelength exponent", "your exponent is 1 - 1/d: pair ℓ has frequency b^(-2ℓ/d), so the last pair's "
             "exponent is -(d - 2)/d = -(1 - 2/d)",
             lambda d, b: 2 * math.pi * b ** (1 - 1 / d)),
]


def _wavelength_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """The answer as (2π)^a b^x: which power of the base it took, and whether 2π multiplies or divides."""
    dim, base = case.args
    value = float(got)
    if value <= 0:
        return None
    right = 1 - 2 / dim
    for power, how in ((1, "2π times"), (-1, "1/(2π) times"), (0, "")):
        exponent = math.log(value / (2 * math.pi) ** power) / math.log(base)
        if math.isclose(exponent, -right, abs_tol=1e-6) and power != 0:
            return (f"your answer is {how} the frequency θ_(d/2-1) = b^(-(1 - 2/d)): the wavelength divides 2π by "
                    "the frequency, λ = 2π / θ = 2π b^(1 - 2/d), the positions one turn takes (invert the frequency)")
    counted = _reduction(got, expected, {"d/2, the number of pairs,": dim // 2, "the dimension d": dim})
    if counted:
        return f"your wavelength is {counted}: the slowest pair's wavelength is 2π b^(1 - 2/d), of no pair count"
    return None


def _wavelength_cases(generator: torch.Generator) -> list[_Case]:
    return [_Case((d, b), f"fn(dim={d}, base={b:g})") for d, b in [(64, 1e4), (128, 5e5), (256, 1e4), (8, 100.0)]]


@_public
def check_slowest_wavelength(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(dim, base)``: the wavelength ``2π b^(1 - 2/d)`` of the slowest pair (a number, rel. 1e-6).

    Named mistakes: ``2π b``, the frequency instead of the wavelength, no ``2π``, the pair before the
    last, the fastest pair, exponent ``1 - 1/d``, the exponent's parentheses lost (``2π b - 2/d``, or
    ``(2π b)^(1 - 2/d)``), degrees; otherwise a wavelength built on the frequency.
    """
    return _simple_checker(
        "slowest wavelength", fn, _wavelength_cases, reference_slowest_wavelength, _WAVELENGTH_MISTAKES,
        ["2π b^(1 - 2/d) for 4 hidden dimensions and bases"],
        what="the wavelength", properties=[_wavelength_property], atol=0.0, rtol=1e-6,
    )


# --------------------------------------------------------------------------- ex-ropec-2


def reference_expected_score(cross, offsets, base=10000.0):
    """E[q^T R_δ k] = Σ_ℓ cos(δθ_ℓ)(C11 + C22) + sin(δθ_ℓ)(C21 - C12), C = cross[ℓ], d = 2 * len(cross)."""
    dim = 2 * cross.shape[0]
    theta = base ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim)
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def _expected(cross, offsets, base=10000.0, sin_sign=1.0, use_sin=True, sym=False, exponent_dim=None, swap=False):
    pairs = cross.shape[0]
    dim = 2 * pairs
    theta = base ** (-2 * torch.arange(pairs, dtype=torch.float64) / (exponent_dim or dim))
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    trace = c[:, 0, 0] + c[:, 1, 1]
    odd = (c[:, 1, 0] + c[:, 0, 1]) if sym else sin_sign * (c[:, 1, 0] - c[:, 0, 1])
    cos, sin = (angles.sin(), angles.cos()) if swap else (angles.cos(), angles.sin())
    return cos @ trace + (sin @ odd if use_sin else 0.0)


_EXPECTED_MISTAKES = [
    _Mistake("expected sine sign", "the sine term has the wrong sign: either it uses (C12 - C21) instead of "
             "(C21 - C12), or the offsets are negated, -δ for δ (sin is odd: both give these numbers); the trace is "
             "tr(B(δθ) C^T), with C transposed (E[k q^T] holds C^T)",
             lambda c, o, b=10000.0: _expected(c, o, b, sin_sign=-1.0)),
    _Mistake("expected cosine only", "your score has no sine term: the antisymmetric part of C, C21 - C12, "
             "multiplies sin(δθ_ℓ)",
             lambda c, o, b=10000.0: _expected(c, o, b, use_sin=False)),
    _Mistake("expected symmetric sine", "your sine term uses C21 + C12: it is the antisymmetric part, C21 - C12",
             lambda c, o, b=10000.0: _expected(c, o, b, sym=True)),
    _Mistake("expected dim", "your frequencies are b^(-4ℓ/d) = (b²)^(-2ℓ/d): either they use the number of pairs "
             "d/2 as the dimension, or the base is squared (both give these numbers): with d/2 blocks of C "
             "the head dimension is d = 2 * cross.shape[0], and θ_ℓ = b^(-2ℓ/d)",
             lambda c, o, b=10000.0: _expected(c, o, b, exponent_dim=c.shape[0])),
    _Mistake("expected sin cos swapped", "you swapped sine and cosine: the trace C11 + C22 goes with cos(δθ_ℓ)",
             lambda c, o, b=10000.0: _expected(c, o, b, swap=True)),
    _Mistake("expected base ignored", "your function ignores its base argument (10000 is used whatever base is "
             "given): θ_ℓ = base^(-2ℓ/d)",
             lambda c, o, b=10000.0: _expected(c, o)),
]


def _expected_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    cross, offsets, base = case.args
    c = cross.double()
    pairs = cross.shape[0]
    counted = _reduction(got, expected, {"the number of pairs d/2": pairs, "the dimension d": 2 * pairs})
    if counted:
        return f"your expected scores are {counted}; E[q^T R_δ k] is the sum over the pairs ℓ, not their mean"
    for shift in (1, -1):
        if _close(got, reference_expected_score(cross, offsets + shift, base), atol=1e-6):
            return (f"your expected scores are those of the offsets δ {shift:+d}: the score at offset δ uses the "
                    "angles δ θ_ℓ themselves")

    def answer(theta: torch.Tensor) -> torch.Tensor:
        angles = offsets.double()[:, None] * theta
        return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])

    return (_ladder_slip(got, 2 * cross.shape[0], base, answer) or _expected_terms(got, cross, offsets, base)
            or _expected_half_width(got, cross, offsets, base))


def _expected_half_width(got: torch.Tensor, cross: torch.Tensor, offsets: torch.Tensor, base: float) -> str | None:
    """Name an answer built only on the even rungs θ_0, θ_2, ... of the ladder: a head of width d/2's frequencies.

    b^(-2(2m)/d) = b^(-2m/(d/2)): a ladder computed with len(cross) = d/2 as the width, duplicated, repeated or cut,
    gives a sum of cosines and sines of these frequencies only, whatever coefficients it puts on them.
    """
    pairs = cross.shape[0]
    if pairs < 4:
        return None
    angles = offsets.double()[:, None] * _theta(2 * pairs, base)
    basis = torch.cat((angles.cos(), angles.sin()), dim=-1)
    if basis.shape[0] < basis.shape[1] or int(torch.linalg.matrix_rank(basis)) < basis.shape[1]:
        return None
    fit = torch.linalg.lstsq(basis, got.double()[:, None]).solution.flatten()
    odd = torch.cat((fit[1:pairs:2], fit[pairs + 1::2]))
    if not bool(torch.allclose(basis @ fit, got.double(), atol=1e-6)) or not bool((odd.abs() < 1e-6).all()):
        return None
    return (f"your score has terms only at the frequencies θ_0, θ_2, θ_4, ... = b^(-2m/(d/2)), those of a head of "
            f"width d/2 = len(cross) = {pairs}, and none at θ_1, θ_3, ...: the head has width d = 2 * len(cross) = "
            f"{2 * pairs}, and block ℓ of C goes with θ_ℓ = b^(-2ℓ/d), ℓ = 0 .. d/2 - 1")


def _expected_terms(got: torch.Tensor, cross: torch.Tensor, offsets: torch.Tensor, base: float) -> str | None:
    """The answer's coefficients of cos(δθ_ℓ) and sin(δθ_ℓ), fitted, said as entries of each block C^(ℓ)."""
    pairs = cross.shape[0]
    angles = offsets.double()[:, None] * _theta(2 * pairs, base)
    basis = torch.cat((angles.cos(), angles.sin()), dim=-1)
    if basis.shape[0] < basis.shape[1] or int(torch.linalg.matrix_rank(basis)) < basis.shape[1]:
        return None
    fit = torch.linalg.lstsq(basis, got.double()[:, None]).solution.flatten()
    if not bool(torch.allclose(basis @ fit, got.double(), atol=1e-6)):
        return None
    c = cross.double()
    c11, c12, c21, c22 = c[:, 0, 0], c[:, 0, 1], c[:, 1, 0], c[:, 1, 1]
    terms = {"C11 + C22": c11 + c22, "C11 - C22": c11 - c22, "C22 - C11": c22 - c11, "C21 - C12": c21 - c12,
             "C12 - C21": c12 - c21, "C12 + C21": c12 + c21, "C11": c11, "C22": c22, "0": torch.zeros_like(c11)}
    found = []
    for part, coefficients, right in (("cos(δθ_ℓ)", fit[:pairs], "C11 + C22"), ("sin(δθ_ℓ)", fit[pairs:], "C21 - C12")):
        name = next((name for name, value in terms.items() if torch.allclose(coefficients, value, atol=1e-6)), None)
        if name is None:
            return None
        if name != right:
            found.append(f"{part} is multiplied by {name} where it must be {right}")
    if not found:
        return None
    return ("in each pair ℓ your score's " + " and ".join(found) + ", with C = C^(ℓ): E[q^T R_δ k] = Σ_ℓ "
            "(C11 + C22) cos(δθ_ℓ) + (C21 - C12) sin(δθ_ℓ), the trace with the cosine")


def _expected_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    # Base 500 separates "base ignored" from "d/2 as the dimension", which agree at base 100 (10000 = 100²).
    for pairs, base in [(8, 10000.0), (4, 100.0), (16, 10000.0), (6, 500.0)]:
        cross = torch.randn(pairs, 2, 2, generator=generator, dtype=torch.float64)
        cases.append(_Case((cross, torch.arange(-20, 61), base), f"fn(cross: ({pairs}, 2, 2), "
            f"offsets=-20..60, base={base:g})"))
    identity = torch.eye(2, dtype=torch.float64).expand(8, 2, 2).clone()
    shown = "fn(cross = identity blocks (8, 2, 2), offsets=0..200)"
    cases.append(_Case((identity, torch.arange(0, 201), 10000.0), shown))
    return cases


@_public
def check_expected_score(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(cross, offsets, base=10000.0)``: ``E[q^T R_δ k]`` for every offset.

    ``cross`` has shape ``(d/2, 2, 2)``, block ``ℓ`` being ``C^(ℓ) = E[q^(ℓ) k^(ℓ)T]``; the answer has
    one value per offset: ``Σ_ℓ cos(δθ_ℓ)(C11 + C22) + sin(δθ_ℓ)(C21 - C12)`` (within 1e-5). Named
    mistakes: the sine's sign, no sine, ``C21 + C12``, ``d/2`` used as the dimension, sin and cos swapped,
    the base ignored; otherwise a slip of the frequency ladder (the exponent's sign, ``ℓ/d``, ``ℓ``
    from 1).
    """
    return _simple_checker(
        "expected score", fn, _expected_cases, reference_expected_score, _EXPECTED_MISTAKES,
        ["the expected score is right for random cross-covariances and for the identity (the all-ones curve)"],
        what="the expected scores", properties=[_expected_property],
    )


# --------------------------------------------------------------------------- ex-ropec-3


def reference_score_asymmetry(query, key, offsets, base=10000.0):
    """s(δ) - s(-δ) with s(δ) = q^T R_δ k: -2 Σ_ℓ Im(conj(q_ℓ) k_ℓ) sin(δθ_ℓ)."""
    dim = query.shape[-1]
    theta = base ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim)
    q, k = query.double(), key.double()
    imag = q[0::2] * k[1::2] - q[1::2] * k[0::2]
    return -2 * torch.sin(offsets.double()[:, None] * theta) @ imag


def _score(q, k, offsets, base, layout="interleaved"):
    dim = q.shape[-1]
    frequencies = _theta(dim, base)
    rotated = apply_rope(k.double().expand(len(offsets), dim), offsets, frequencies=frequencies, layout=layout)
    return rotated @ q.double()


def _asymmetry_float32_angles(q, k, offsets, base=10000.0):
    """s(δ) - s(-δ) with its angles δθ_ℓ formed in float32, the rest in float64."""
    theta = _theta(q.shape[-1], base).float()
    sines = (offsets.float()[:, None] * theta).double().sin()
    return -2 * sines @ (q.double()[0::2] * k.double()[1::2] - q.double()[1::2] * k.double()[0::2])


_ASYMMETRY_MISTAKES = [
    _Mistake("asymmetry float32 angles", "your angles δθ_ℓ are formed in float32: at an offset such as 100,000 "
             "float32 keeps about 3 decimals of the angle, and the sines inherit the error; the query and key are "
             "float64, so form θ_ℓ and δθ_ℓ in float64 (offsets.double()[:, None] * theta.double())",
             _asymmetry_float32_angles, tolerance=3e-2),
    _Mistake("asymmetry sign", "your difference has the wrong sign: either the subtraction is the "
             "other way round, s(-δ) - s(δ), or the query is rotated instead of the key, (R_δ q)^T k = s(-δ), or the "
             "other vector is conjugated, conj(k_ℓ) q_ℓ where h_ℓ = conj(q_ℓ) k_ℓ (all give these numbers)",
             lambda q, k, o, b=10000.0: -reference_score_asymmetry(q, k, o, b)),
    _Mistake("asymmetry factor", "your difference lacks the factor 2: s(δ) - s(-δ) = -2 Σ Im(h_ℓ) sin(δθ_ℓ)",
             lambda q, k, o, b=10000.0: reference_score_asymmetry(q, k, o, b) / 2),
    _Mistake("asymmetry sum", "you returned s(δ) + s(-δ), the symmetric part: the exercise asks for the "
             "difference s(δ) - s(-δ)",
             lambda q, k, o, b=10000.0: _score(q, k, o, b) + _score(q, k, -o, b)),
    _Mistake("asymmetry half", "you paired coordinate ℓ with ℓ + d/2 (the half layout): the chapter's pairs "
             "are (2ℓ, 2ℓ + 1)",
             lambda q, k, o, b=10000.0: _score(q, k, o, b, "half") - _score(q, k, -o, b, "half")),
    _Mistake("asymmetry abs", "you returned |s(δ) - s(-δ)|: keep the sign of the difference",
             lambda q, k, o, b=10000.0: reference_score_asymmetry(q, k, o, b).abs()),
    _Mistake("asymmetry cos", "your formula has cos(δθ_ℓ) where the sine belongs: the difference of "
             "Re(h e^(iδθ)) and Re(h e^(-iδθ)) keeps only the sine terms",
             lambda q, k, o, b=10000.0: -2 * torch.cos(o.double()[:, None] * _theta(q.shape[-1], b))
             @ (q.double()[0::2] * k.double()[1::2] - q.double()[1::2] * k.double()[0::2])),
]


_SCALES = {2: "2δ", 1: "δ", 0.5: "δ/2", 0: "0", -0.5: "-δ/2", -1: "-δ", -2: "-2δ"}


def _asymmetry_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """The answer as a difference of two scores s(aδ) - s(bδ): which offsets it compared."""
    query, key, offsets, base = case.args
    pairs = query.shape[-1] // 2
    counted = _reduction(got, expected, {"the number of pairs d/2": pairs, "the dimension d": 2 * pairs})
    if counted:
        return f"your differences are {counted}; s(δ) - s(-δ) sums over the pairs ℓ, it is not their mean"
    norms = {"|q| |k|": float(query.double().norm() * key.double().norm()), "|q|²": float(query.double().norm() ** 2),
             "|k|²": float(key.double().norm() ** 2)}
    for name, norm in norms.items():
        if _close(got, expected / norm, atol=1e-9):
            return (f"your differences are divided by {name}: s(δ) = q^T R_δ k is the score itself, not normalised "
                    "by the lengths of the vectors")
    for sign in (1, -1):
        if _close(got, _score(query, key, sign * offsets, base), atol=1e-6):
            return (f"your answer is s({_SCALES[sign]}) alone, one score: the exercise asks for the difference s(δ) - "
                    "s(-δ), the score at offset δ minus the score at offset -δ")
    for a in _SCALES:
        for b in _SCALES:
            if a == b or (a, b) == (1, -1):
                continue
            value = _score(query, key, a * offsets, base) - _score(query, key, b * offsets, base)
            if _close(got, value, atol=1e-6):
                doubled = (" (both offsets doubled: if you rotated the query by -δ as well as the key by δ, the "
                           "pair turned by 2δ; rotate only the key)") if (a, b) == (2, -2) else (
                           " (both offsets halved)" if (a, b) == (0.5, -0.5) else "")
                return (f"your answer is s({_SCALES[a]}) - s({_SCALES[b]}){doubled}: the exercise asks for s(δ) - "
                        "s(-δ), the score at offset δ minus the score at offset -δ")
    q, k = query.double(), key.double()
    angles = offsets.double()[:, None] * _theta(query.shape[-1], base)
    cosines = torch.cat((angles.cos(), torch.ones_like(angles[:, :1])), dim=-1)
    fit = torch.linalg.lstsq(cosines, got.double()[:, None]).solution
    if cosines.shape[0] > cosines.shape[1] and _close(cosines @ fit, got.double()[:, None], atol=1e-6):
        return ("your answer is made of cosines cos(δθ_ℓ), an even function of δ: in s(δ) - s(-δ) the cosine terms "
                "cancel and only the sines remain, -2 Σ_ℓ Im(conj(q_ℓ) k_ℓ) sin(δθ_ℓ)")
    imag = q[0::2] * k[1::2] - q[1::2] * k[0::2]
    return _ladder_slip(got, query.shape[-1], base, lambda theta: -2 * torch.sin(offsets.double()[:, None] * theta)
                        @ imag) or _asymmetry_coefficients(got, query, key, offsets, base)


def _asymmetry_coefficients(got: torch.Tensor, query: torch.Tensor, key: torch.Tensor, offsets: torch.Tensor,
                            base: float) -> str | None:
    """The answer's coefficient of sin(δθ_ℓ) in each pair, fitted, said in the pair's coordinates."""
    sines = torch.sin(offsets.double()[:, None] * _theta(query.shape[-1], base))
    if sines.shape[0] < sines.shape[1] or int(torch.linalg.matrix_rank(sines)) < sines.shape[1]:
        return None
    fit = torch.linalg.lstsq(sines, got.double()[:, None]).solution.flatten()
    if not bool(torch.allclose(sines @ fit, got.double(), atol=1e-6)):
        return None
    q, k = query.double(), key.double()
    a, b, c, e = q[0::2] * k[1::2], q[1::2] * k[0::2], q[0::2] * k[0::2], q[1::2] * k[1::2]
    right = "q_2ℓ k_2ℓ+1 - q_2ℓ+1 k_2ℓ"
    products = {right: a - b, "q_2ℓ k_2ℓ+1 + q_2ℓ+1 k_2ℓ": a + b, "q_2ℓ k_2ℓ + q_2ℓ+1 k_2ℓ+1 (the pair's q·k)": c + e,
                "q_2ℓ k_2ℓ - q_2ℓ+1 k_2ℓ+1": c - e, "q_2ℓ k_2ℓ+1": a, "q_2ℓ+1 k_2ℓ": b}
    for name, value in products.items():
        for factor in (-2.0, 2.0, -1.0, 1.0):
            if torch.allclose(fit, factor * value, atol=1e-6) and (factor, name) != (-2.0, right):
                plus = " + q_2ℓ+1 k_2ℓ" in name
                why = (": the cross term is a difference, a minus between its two products; a sum is what q_ℓ k_ℓ "
                       "gives without the conjugate, Im(q_ℓ k_ℓ) in place of Im(conj(q_ℓ) k_ℓ)") if plus else ""
                return (f"in each pair ℓ your coefficient of sin(δθ_ℓ) is {factor:+g} ({name}); it must be "
                        f"-2 (q_2ℓ k_2ℓ+1 - q_2ℓ+1 k_2ℓ), -2 Im(conj(q_ℓ) k_ℓ){why}")
    return None


def _asymmetry_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    for dim, base in [(16, 10000.0), (8, 500.0), (32, 10000.0)]:
        q, k = (torch.randn(dim, generator=generator, dtype=torch.float64) for _ in range(2))
        cases.append(_Case((q, k, torch.arange(1, 60), base), f"fn(query, key of dim {dim}, offsets=1..59, "
                           f"base={base:g})"))
    # Far offsets, as the chapter's own checks use (to 10^5 at d = 64): there angles formed in float32 are off by
    # about 1e-3 rad, beyond the tolerance, which a float64 input must not show.
    q, k = (torch.randn(64, generator=generator, dtype=torch.float64) for _ in range(2))
    far = torch.cat((torch.arange(1, 60), torch.arange(4000, 100001, 4000)))  # near ones too: a slip's region shows
    cases.append(_Case((q, k, far, 10000.0), "fn(query, key of dim 64, offsets=1..59 and 4000, 8000, ..., 100000, "
                       "base=10000)"))
    return cases


@_public
def check_score_asymmetry(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(query, key, offsets, base=10000.0)``: ``s(δ) - s(-δ)`` for every offset, ``s(δ) = q^T R_δ k``.

    Computed directly from rotations or with the formula ``-2 Σ Im(h_ℓ) sin(δθ_ℓ)``: both pass
    (within 1e-5). Named mistakes: the sign, no factor 2, the sum instead of the difference, the
    half layout, an absolute value, cosine instead of sine, angles formed in float32 (seen at the
    offsets up to 100,000 of one case); otherwise which two scores ``s(aδ) - s(bδ)`` were subtracted.
    """
    return _simple_checker(
        "score asymmetry", fn, _asymmetry_cases, reference_score_asymmetry, _ASYMMETRY_MISTAKES,
        ["s(δ) - s(-δ) is right for 4 hidden random pairs of vectors, one with offsets up to 100,000"],
        what="the differences", atol=1e-6, properties=[_asymmetry_property],
    )


# --------------------------------------------------------------------------- ex-ropec-5


def reference_positional_head_query(key, target, base=10000.0):
    """q = R_target k: the score q^T R_δ k = (R_-target R_δ k)^T k... peaks at δ = target, where it is |k|²."""
    from posenc import apply_rope

    return apply_rope(key[None], torch.tensor([target]), base=base)[0]


_OFFSETS = torch.arange(-500, 501)


def _peak(query: torch.Tensor, key: torch.Tensor, base: float) -> int:
    dim = key.shape[-1]
    scores = apply_rope(key.double().expand(len(_OFFSETS), dim), _OFFSETS, base=base) @ query.double()
    return int(_OFFSETS[scores.argmax()])


def _peaks_at_target(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> bool:
    key, target, base = case.args
    return _peak(got, key, base) == target


def _describe_peak(got: torch.Tensor, case: _Case) -> str:
    key, target, base = case.args
    return f"{case.shown}: the score of your query peaks at δ = {_peak(got, key, base)}, not at {target}"


_HEAD_MISTAKES = [
    _Mistake("head wrong way", "your query is rotated the wrong way, R_(-δ*) k: the score then peaks at -δ*; "
             "q = R_δ* k peaks at δ*",
             lambda k, t, b=10000.0: apply_rope(k[None].double(), torch.tensor([-t]), base=b)[0]),
    _Mistake("head not rotated", "your query is the key itself (or a multiple): the score of q = k peaks at "
             "offset 0; rotate it, q = R_δ* k",
             lambda k, t, b=10000.0: k.double()),
    _Mistake("head half layout", "you rotated with the half layout (pairs ℓ, ℓ + d/2): the scores here use "
             "the interleaved pairs (2ℓ, 2ℓ + 1)",
             lambda k, t, b=10000.0: apply_rope(k[None].double(), torch.tensor([t]), base=b, layout="half")[0]),
    _Mistake("head base ignored", "your function ignores its base argument",
             lambda k, t, b=10000.0: apply_rope(k[None].double(), torch.tensor([t]))[0]),
    _Mistake("head negated", "your query is -R_δ* k: its score has a minimum, not a maximum, at δ*",
             lambda k, t, b=10000.0: -apply_rope(k[None].double(), torch.tensor([t]), base=b)[0]),
    _Mistake("head exponent", "your rotation uses the frequencies b^(-ℓ/d): the scores use RoPE's θ_ℓ = "
             "b^(-2ℓ/d), so your query's peak lands near δ*, not on it",
             lambda k, t, b=10000.0: apply_rope(k[None].double(), torch.tensor([t]), frequencies=b ** (
                 -torch.arange(k.shape[-1] // 2, dtype=torch.float64) / k.shape[-1]))[0]),
]


def _head_property(got: torch.Tensor, expected: torch.Tensor, case: _Case) -> str | None:
    """Explain a query by where its score peaks (or dips): the property the exercise asks for."""
    key, target, base = case.args
    dim = key.shape[-1]
    scores = apply_rope(key.double().expand(len(_OFFSETS), dim), _OFFSETS, base=base) @ got.double()
    if int(_OFFSETS[scores.argmin()]) == target:
        return f"the score of your query has its minimum at δ = {target}, not its maximum: {_HEAD_MISTAKES[4].message}"
    peak = int(_OFFSETS[scores.argmax()])
    mine = got.double() / got.double().norm()
    for mistake in _HEAD_MISTAKES:  # a multiple of a mistake's query (any scale or dtype) is that mistake
        wrong = mistake.wrong(key, target, base).double()
        if float(mine @ (wrong / wrong.norm())) > 1 - 1e-6:
            return f"your query is a multiple of this mistake's, its score peaks at δ = {peak}: {mistake.message}"
    rotated = _rotated_by(got, key, base)
    if rotated is not None and rotated != target:
        how = ("twice the target" if rotated == 2 * target else "off by one from the target"
               if abs(rotated - target) == 1 else "the negated target" if rotated == -target
               else "twice the negated target" if rotated == -2 * target else "not the target")
        return (f"your query is the key rotated by {rotated}, {how} ({target}), so its score peaks at δ = {peak}: "
                "q = R_target k, the key rotated by the target offset itself, peaks there")
    peaking = [mistake for mistake in _HEAD_MISTAKES if mistake.key != "head negated"
               and _peak(mistake.wrong(key, target, base), key, base) == peak != target]
    if len(peaking) == 1:
        return f"the score of your query peaks at δ = {peak}, where this mistake puts it: {peaking[0].message}"
    unrotated = _unrotated_pairs(got.double()[None], expected.double()[None], key.double()[None], "interleaved")
    if unrotated is not None:
        return f"your query is the key turned by the target on some pairs only: {unrotated}"
    slip = _ladder_slip(mine, dim, base, lambda theta: (lambda q: q / q.norm())(apply_rope(
        key.double()[None], torch.tensor([target]), frequencies=theta)[0]))
    if slip is not None:  # the key turned by the target, at a wrong ladder of frequencies
        return f"your query is the key turned by the target {target} at other frequencies: {slip}"
    if rotated is None:
        return (f"your query is not the key turned by any whole offset (no t in -1000 .. 1000 gives q = R_t k, up to a "
                f"positive factor), so its score peaks at δ = {peak}, not at {target}: build q from the key itself, "
                "rotated by the target, q = R_target k (RoPE of the key at position target)")
    return None


def _rotated_by(query: torch.Tensor, key: torch.Tensor, base: float) -> int | None:
    """The whole offset t with query = R_t key (up to a positive factor), if there is one in [-1000, 1000]."""
    candidates = torch.arange(-1000, 1001)
    dim = key.shape[-1]
    rotated = apply_rope(key.double().expand(len(candidates), dim), candidates, base=base)
    mine = query.double() / query.double().norm()
    cosines = rotated @ mine / rotated.norm(dim=-1)
    best = int(cosines.argmax())
    return int(candidates[best]) if float(cosines[best]) > 1 - 1e-9 else None


def _head_cases(generator: torch.Generator) -> list[_Case]:
    cases = []
    for dim, target, base in [(64, -3, 10000.0), (64, 17, 10000.0), (32, -40, 500.0)]:
        key = torch.randn(dim, generator=generator, dtype=torch.float64)
        cases.append(_Case((key, target, base), f"fn(key of dim {dim}, target={target}, base={base:g})"))
    return cases


@_public
def check_positional_head_query(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(key, target, base=10000.0)``: a query whose score ``q^T R_δ k`` over
    ``δ ∈ [-500, 500]`` is largest at ``δ = target``.

    Any such query passes (``R_target k`` is one). Named mistakes: rotated the wrong way, not
    rotated, the half layout, base ignored, the negated query (a minimum), the exponent ``ℓ/d``;
    a query that equals none of them (a multiple, another dtype) is named by where its score peaks.
    """
    return _simple_checker(
        "positional head", fn, _head_cases, reference_positional_head_query, _HEAD_MISTAKES,
        ["the score peaks at the target offset over [-500, 500] for 3 hidden keys and targets"],
        what="the query", accept=_peaks_at_target, describe=_describe_peak, atol=1e-6,
        properties=[_head_property],
    )
