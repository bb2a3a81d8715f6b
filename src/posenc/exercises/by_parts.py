"""Checkers of the context-extension rules that treat RoPE's pairs by parts: YaRN and ``llama3``.

Both keep the fast pairs (short wavelengths) as trained, interpolate the slow ones by the scale
factor, and blend in between; each checker compares the student's ``(d/2,)`` frequencies with
the reference of :mod:`posenc.scaling` on hidden settings, as :mod:`posenc.exercises.scaling`
does:

- :func:`~posenc.exercises.check_yarn_frequencies`: YaRN (NTK-by-parts with a ramp in the
  pair index, and its attention factor);
- :func:`~posenc.exercises.check_llama3_frequencies`: Llama 3.1's ``llama3`` rule.

When no typical mistake fits, the answer is described by its parts: which pairs it keeps, which
it divides by the factor, whether a pair leaves the interval between ``θ_ℓ / s`` and ``θ_ℓ`` (a
share not clamped), whether the blend inside the band is inverted or the band misplaced.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from .._angles import frequencies as _theta
from ..scaling import llama3_frequencies, yarn_frequencies
from .checking import CheckResult, _public
from .frequency_rules import _EXPONENT, _FROM_ONE, _check_rule, _Rule, _shifted_theta, _Variant

__all__ = ["check_llama3_frequencies", "check_yarn_frequencies"]


# --------------------------------------------------------------------------- YaRN


def _yarn_variant(
    dim: int, base: float, factor: float, train_len: int, beta_fast: float, beta_slow: float, *,
    swap: bool = False, invert: bool = False, rounding: bool = True,
    ladder: Callable[[int, float], torch.Tensor] = _theta, factor_power: float = 0.0, log_ratio: float = 1.0,
) -> torch.Tensor:
    theta = ladder(dim, base)

    def pair_index(turns: float) -> float:
        return log_ratio * dim * math.log(train_len / (2 * math.pi * turns)) / (2 * math.log(base))

    first, second = (beta_slow, beta_fast) if swap else (beta_fast, beta_slow)
    low, high = pair_index(first), pair_index(second)
    if rounding:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    share = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0.0, 1.0)
    if invert:
        share = 1 - share
    frequencies = theta * (1 - share) + theta / factor * share
    return frequencies * (0.1 * math.log(factor) + 1.0) ** factor_power


def _paper_ramp(dim: int, base: float, factor: float, train_len: int, beta_fast: float, beta_slow: float) -> Any:
    return llama3_frequencies(dim, base, factor=factor, low_freq_factor=beta_slow, high_freq_factor=beta_fast,
                              original_max_position=train_len)


_YARN = _Rule(
    exercise="YaRN frequencies",
    arguments=("dim", "base", "factor", "original_max_position", "beta_fast", "beta_slow"),
    settings=(
        (128, 10000.0, 8.0, 4096, 32.0, 1.0), (64, 10000.0, 4.0, 2048, 32.0, 1.0),
        (128, 500000.0, 16.0, 8192, 32.0, 1.0),
        (32, 10000.0, 2.0, 512, 16.0, 2.0), (96, 1000000.0, 4.0, 32768, 32.0, 1.0),
    ),
    reference=lambda dim, base, factor, train_len, beta_fast, beta_slow: yarn_frequencies(
        dim, base, factor=factor, original_max_position=train_len, beta_fast=beta_fast, beta_slow=beta_slow
    )[0],
    variants=(
        _Variant("ramp reversed", partial(_yarn_variant, invert=True),
                 "your ramp runs the wrong way: the fast pairs (r_ℓ = L/λ_ℓ >= beta_fast turns) must keep θ_ℓ and the "
                 "slow ones (r_ℓ <= beta_slow) get θ_ℓ / s; yours interpolates the fast pairs and keeps the slow ones"),
        _Variant("bounds swapped", partial(_yarn_variant, swap=True),
                 "the ramp's bounds are swapped: it starts (share interpolated 0) at the pair index where r_ℓ = "
                 "beta_fast, rounded down, and ends (share 1) where r_ℓ = beta_slow, rounded up; pair index for r "
                 "turns: d·ln(L / (2π r)) / (2 ln base)"),
        _Variant("no rounding", partial(_yarn_variant, rounding=False),
                 "the ramp's bounds are not rounded: as in transformers and the authors' code, the lower bound is "
                 "floored and the upper one ceiled (truncate=True)"),
        _Variant("paper ramp", _paper_ramp,
                 "your ramp is linear in the number of turns r_ℓ, as the YaRN paper writes it (that is the llama3 "
                 "rule); the code that models load, transformers' and the authors', ramps linearly in the pair index "
                 "ℓ between the two rounded bounds"),
        *(_Variant(f"log base {name}", partial(_yarn_variant, log_ratio=ratio),
                   f"your ramp's bounds are {ratio:.3g} times the right pair indices, the ratio {how}: the pair "
                   "index d·ln(L / (2π r)) / (2 ln base) mixes logarithms of two bases; take both in the same base "
                   "(math.log, or math.log2 twice), whose ratio is then the same")
          for name, ratio, how in (("2", math.log(2), "ln 2 = ln x / log2 x (log2 of the base beside a natural log)"),
                                   ("2 above", 1 / math.log(2), "1 / ln 2 (log2 above beside a natural log below)"),
                                   ("10", math.log(10), "ln 10 (log10 of the base beside a natural log)"),
                                   ("10 above", 1 / math.log(10), "1 / ln 10 (log10 above beside a natural log "
                                                                  "below)"))),
        *(_Variant(f"turns over {name}", lambda d, b, s, train_len, *rest, k=k: _yarn_variant(
            d, b, s, train_len * s ** k, *rest),
                   f"your ramp's bounds count the turns over {name}: r_ℓ = L / λ_ℓ counts them over the training "
                   "length L = original_max_position, the length the model saw, so the band sits at the pairs that "
                   "turned beta_fast to beta_slow times during training")
          for name, k in (("the extended length s·L", 1), ("L / s", -1))),
        _Variant("PI", lambda d, b, s, *rest: _theta(d, b) / s,
                 "these are PI's frequencies, θ_ℓ / s for every pair: YaRN keeps the fast pairs (r_ℓ >= beta_fast), "
                 "interpolates the slow ones and blends in between"),
        _Variant("exponent", lambda d, b, *rest: _yarn_variant(d, math.sqrt(b), *rest), _EXPONENT),
        _Variant("from one", partial(_yarn_variant, ladder=_shifted_theta), _FROM_ONE),
        _Variant("temperature in frequencies", partial(_yarn_variant, factor_power=1.0),
                 "you multiplied the frequencies by the attention factor 0.1 ln s + 1: that factor scales cos and sin "
                 "(the attention temperature), not the angles; return it separately, (frequencies, factor)"),
        _Variant("temperature divides frequencies", partial(_yarn_variant, factor_power=-1.0),
                 "you divided the frequencies by the attention factor 0.1 ln s + 1: that factor scales cos and sin "
                 "(the attention temperature), not the angles; return it separately, (frequencies, factor)"),
    ),
    verified=(
        "dimensions 32 to 128, bases 10000 to 1000000, factors 2 to 16, training lengths 512 to 32768, two settings "
        "of (beta_fast, beta_slow)",
        "YaRN keeps the pairs with r_ℓ = L/λ_ℓ >= beta_fast turns, divides those with r_ℓ <= beta_slow by s, and "
        "blends with a ramp linear in the pair index ℓ between floor(ℓ(beta_fast)) and ceil(ℓ(beta_slow))",
    ),
    by_parts=True,
)


@_public
def check_yarn_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's YaRN frequencies ``fn(dim, base, factor, original_max_position, beta_fast, beta_slow)``.

    The function returns the ``(dim/2,)`` frequencies, or the pair ``(frequencies,
    attention_factor)`` as :func:`posenc.scaling.yarn_frequencies` does (then the attention
    factor :math:`0.1 \\ln s + 1` is checked too). The frequencies must equal those of
    :func:`posenc.scaling.yarn_frequencies`, whose ramp is linear in the pair index between
    rounded bounds as in ``transformers``, on five hidden settings. Diagnosed mistakes: the ramp
    reversed (fast pairs interpolated); its bounds swapped; its bounds not rounded; the paper's
    ramp, linear in the number of turns; the turns counted over ``s L`` or ``L / s``; logarithms
    of two bases in the pair index; PI's frequencies; the exponent ``ℓ/d``; the pair returned in
    the other order; an attention factor squared, inverted or with a base-10 logarithm; wrong
    shape; exceptions.

    Args:
        fn: the student's function, called as
            ``fn(dim, base, factor, original_max_position, beta_fast, beta_slow)``.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """
    return _check_rule(fn, _YARN, yarn=True)


# --------------------------------------------------------------------------- llama3


def _llama3_variant(
    dim: int, base: float, factor: float, train_len: int, low: float, high: float, *, invert: bool = False,
    clamp: bool = True, two_pi: bool = True, ladder: Callable[[int, float], torch.Tensor] = _theta,
    regimes_swapped: bool = False, ramp_in_wavelength: bool = False, inverse_turns: bool = False,
) -> torch.Tensor:
    theta = ladder(dim, base)
    turns = train_len * theta / (2 * math.pi if two_pi else 1.0)
    if inverse_turns:  # λ_ℓ / L, the wavelength over the length, where the rule counts the turns L / λ_ℓ
        turns = 1 / turns
    kept = (turns - low) / (high - low)
    if ramp_in_wavelength:  # linear in λ between the bounds L/low (share 0) and L/high (share 1)
        wavelength = 2 * math.pi / theta
        kept = (train_len / low - wavelength) / (train_len / low - train_len / high)
    if clamp:
        kept = kept.clamp(0.0, 1.0)
    if invert:
        kept = 1 - kept
    blended = theta * kept + theta / factor * (1 - kept)
    if regimes_swapped:  # `wavelength > L/high: keep; elif wavelength < L/low: divide`: the band is never reached
        blended = torch.where(turns < high, theta, theta / factor)
    return blended


_LLAMA3 = _Rule(
    exercise="llama3 frequencies",
    arguments=("dim", "base", "factor", "original_max_position", "low_freq_factor", "high_freq_factor"),
    settings=(
        (128, 500000.0, 8.0, 8192, 1.0, 4.0), (64, 10000.0, 4.0, 2048, 1.0, 4.0), (128, 500000.0, 32.0, 8192, 1.0, 4.0),
        (128, 500000.0, 4.0, 2048, 2.0, 16.0), (32, 10000.0, 2.0, 512, 1.0, 32.0),
    ),
    reference=lambda dim, base, factor, train_len, low, high: llama3_frequencies(
        dim, base, factor=factor, low_freq_factor=low, high_freq_factor=high, original_max_position=train_len
    ),
    variants=(
        _Variant("blend inverted", partial(_llama3_variant, invert=True),
                 "either the blend is inverted or low_freq_factor and high_freq_factor are swapped (both give these "
                 "frequencies): in the band, γ_ℓ = (L/λ_ℓ - low_freq_factor) / (high_freq_factor - low_freq_factor) "
                 "is the share *kept*, θ'_ℓ = γ_ℓ θ_ℓ + (1 - γ_ℓ) θ_ℓ / s, so γ grows with the number of turns; in "
                 "the rule, the pairs with λ_ℓ < L / high_freq_factor keep θ_ℓ and those with λ_ℓ > L / "
                 "low_freq_factor get θ_ℓ / s, where yours do the opposite"),
        _Variant("no clamp", partial(_llama3_variant, clamp=False),
                 "γ_ℓ is not clamped to [0, 1]: outside the band it must be exactly 0 (θ_ℓ / s) or 1 (θ_ℓ); "
                 "without the clamp the fast pairs are sped up and the slow ones slowed by more than s"),
        _Variant("inverse turns", partial(_llama3_variant, inverse_turns=True),
                 "your blend is read on λ_ℓ / L, the wavelength over the training length, where the rule counts "
                 "the turns r_ℓ = L / λ_ℓ = L θ_ℓ / (2π): the fast pairs (many turns) keep θ_ℓ and the slow ones "
                 "(r_ℓ <= low_freq_factor) get θ_ℓ / s; with λ / L the band lands on the wrong pairs"),
        _Variant("no 2π", partial(_llama3_variant, two_pi=False),
                 "the number of turns is L/λ_ℓ = L θ_ℓ / (2π): your count is missing the 2π, so the band sits at the "
                 "wrong pairs"),
        _Variant("PI", lambda d, b, s, *rest: _theta(d, b) / s,
                 "these are PI's frequencies, θ_ℓ / s for every pair: llama3 keeps the pairs with λ_ℓ < L / "
                 "high_freq_factor and blends the band between"),
        _Variant("exponent", lambda d, b, *rest: _llama3_variant(d, math.sqrt(b), *rest), _EXPONENT),
        _Variant("from one", partial(_llama3_variant, ladder=_shifted_theta), _FROM_ONE),
        _Variant("regimes swapped", partial(_llama3_variant, regimes_swapped=True),
                 "your thresholds point the wrong way (`<` and `>` exchanged): the pairs with λ_ℓ < L / "
                 "high_freq_factor (fast) keep θ_ℓ, those with λ_ℓ > L / low_freq_factor (slow) get θ_ℓ / s; yours "
                 "divide the fast pairs and keep all the others, so the blend is never reached"),
        _Variant("ramp in wavelength", partial(_llama3_variant, ramp_in_wavelength=True),
                 "your blend is linear in the wavelength λ_ℓ: llama3's kept share is linear in the number of turns, "
                 "γ_ℓ = (L/λ_ℓ - low_freq_factor) / (high_freq_factor - low_freq_factor)"),
        _Variant("original", lambda d, b, *rest: _theta(d, b),
                 "every pair keeps its frequency θ_ℓ, so the factor is never applied: if your thresholds compare the "
                 "frequency θ_ℓ with the wavelength bounds L / high_freq_factor and L / low_freq_factor, compare the "
                 "wavelength λ_ℓ = 2π / θ_ℓ instead"),
    ),
    verified=(
        "the Llama 3.1 values (base 500000, factor 8, factors 1 and 4, L = 8192) and four other settings",
        "llama3 keeps θ_ℓ where λ_ℓ < L / high_freq_factor, uses θ_ℓ / s where λ_ℓ > L / low_freq_factor, and blends "
        "in between with the kept share γ_ℓ = (L/λ_ℓ - low_freq_factor) / (high_freq_factor - low_freq_factor)",
    ),
    by_parts=True,
)


@_public
def check_llama3_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's ``llama3`` rule ``fn(dim, base, factor, original_max_position, low, high)``.

    ``low`` and ``high`` are ``low_freq_factor`` and ``high_freq_factor`` (the YaRN paper's
    :math:`\\alpha` and :math:`\\beta`). The ``(dim/2,)`` result must equal
    :func:`posenc.scaling.llama3_frequencies` on five hidden settings, the Llama 3.1 values
    among them. Diagnosed mistakes: the blend inverted (the kept share given to
    :math:`\\theta_\\ell/s`), or the two factors swapped, which gives the same; the share not
    clamped to ``[0, 1]``; the number of turns without its :math:`2\\pi`; PI's frequencies;
    the exponent ``ℓ/d``; wrong shape; exceptions.

    Args:
        fn: the student's function, called as
            ``fn(dim, base, factor, original_max_position, low_freq_factor, high_freq_factor)``.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """
    return _check_rule(fn, _LLAMA3)
