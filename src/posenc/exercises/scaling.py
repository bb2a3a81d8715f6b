"""Checkers of the context-extension exercises that rescale every pair alike: PI, NTK, dynamic NTK.

Each rule of Part V maps the ``d/2`` frequencies :math:`\\theta_\\ell = b^{-2\\ell/d}` of a model
trained at length ``L`` to new ones; each checker calls the student's function on hidden settings
(head dimensions from 8 to 128, bases from 500 to 1 000 000, scale factors from 1.5 to 32) and
compares the ``(d/2,)`` result with the reference of :mod:`posenc.scaling`, itself tested against
``transformers``' ``ROPE_INIT_FUNCTIONS``:

- :func:`~posenc.exercises.check_pi_frequencies`: position interpolation;
- :func:`~posenc.exercises.check_ntk_frequencies`: NTK-aware scaling;
- :func:`~posenc.exercises.check_dynamic_ntk_frequencies`: dynamic NTK.

The rules that treat the pairs by parts, YaRN and Llama 3.1's ``llama3``, are checked in
:mod:`posenc.exercises.by_parts`, with the same machinery (:mod:`posenc.exercises.frequency_rules`).

Every function is called with positional arguments in the order its checker documents. A wrong
answer is compared with the typical mistakes of its rule (PI's factor applied the wrong way, the
NTK exponent ``d/(d-2)`` missing, ...), and the report names the first pair that differs, with the
expected and the returned frequency. When no typical mistake fits, the answer is read as a ladder
``A · B^(-2ℓ/d)`` and its factor ``A`` and base ``B`` are said in the student's terms (``s^(-1)``,
``base · s``, ...) next to the expected ones, with the exponent's sign, a missing factor 2 or a
``linspace`` ladder recognised by their effect.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from .._angles import frequencies as _theta
from ..scaling import dynamic_ntk_frequencies, ntk_frequencies, pi_frequencies
from .checking import CheckResult, _public
from .frequency_rules import (
    _EXPONENT,
    _FROM_ONE,
    _check_rule,
    _Ladder,
    _Rule,
    _shifted_theta,
    _theta_half_exponent,
    _Variant,
)

__all__ = ["check_dynamic_ntk_frequencies", "check_ntk_frequencies", "check_pi_frequencies"]


# --------------------------------------------------------------------------- position interpolation

_PI = _Rule(
    exercise="position interpolation (PI) frequencies",
    arguments=("dim", "base", "factor"),
    settings=((128, 10000.0, 8.0), (64, 10000.0, 2.0), (16, 500.0, 4.0), (8, 500000.0, 1.5), (128, 500000.0, 32.0)),
    reference=lambda dim, base, factor: pi_frequencies(dim, base, factor=factor),
    variants=(
        _Variant("wrong way", lambda d, b, s: _theta(d, b) * s,
                 "you multiply the frequencies by the factor: that makes every pair turn s times faster, so the long "
                 "input reaches angles s² times beyond the trained ones; PI divides, θ'_ℓ = θ_ℓ / s, so that position "
                 "m gets the angles of position m / s"),
        _Variant("factor ignored", lambda d, b, s: _theta(d, b),
                 "these are the original frequencies: the factor is not applied (θ'_ℓ = θ_ℓ / s)"),
        _Variant("base scaled", lambda d, b, s: _theta(d, b * s),
                 "you multiplied the base by s; that slows the pairs unevenly (pair 0 not at all), an NTK-like "
                 "rule without its exponent. PI divides every frequency by the same factor: θ'_ℓ = θ_ℓ / s"),
        _Variant("exponent", lambda d, b, s: _theta_half_exponent(d, b) / s, _EXPONENT),
        _Variant("base ignored", lambda d, b, s: _theta(d, 10000.0) / s,
                 "your function ignores its base argument and uses 10000"),
        _Variant("from one", lambda d, b, s: _shifted_theta(d, b) / s, _FROM_ONE),
        _Variant("twice", lambda d, b, s: _theta(d, b) / s**2,
                 "you divided by the factor twice (s² in all): PI divides either the positions or the frequencies "
                 "by s, not both"),
    ),
    verified=(
        "dimensions 8 to 128, bases 500 to 500000, factors 1.5 to 32",
        "PI divides every frequency by the factor: θ'_ℓ = base^(-2ℓ/d) / s",
    ),
    ladder=lambda setting: _Ladder(1 / setting[2], setting[1], (("base", setting[1]), ("s", setting[2]))),
)


@_public
def check_pi_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's position interpolation ``fn(dim, base, factor) -> (dim/2,) frequencies``.

    The result must equal :func:`posenc.scaling.pi_frequencies`, :math:`b^{-2\\ell/d}/s`, on
    five hidden settings. Diagnosed mistakes: the frequencies multiplied instead of divided by
    the factor; the factor ignored; the base multiplied by the factor; the exponent ``ℓ/d``
    instead of ``2ℓ/d``; the base ignored; one frequency per coordinate instead of per pair; the
    factor applied twice; the pair index from 1; and, by their effect on the ladder, the exponent's
    minus sign lost, wavelengths instead of frequencies, the ``linspace`` exponent ``2ℓ/(d-2)``;
    exceptions.

    Args:
        fn: the student's function, called as ``fn(dim, base, factor)``.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """
    return _check_rule(fn, _PI)


# --------------------------------------------------------------------------- NTK-aware


def _ntk_with_exponent(dim: int, base: float, factor: float, exponent: float) -> torch.Tensor:
    return _theta(dim, base * factor**exponent)


_NTK = _Rule(
    exercise="NTK-aware frequencies",
    arguments=("dim", "base", "factor"),
    settings=((128, 10000.0, 8.0), (64, 10000.0, 4.0), (8, 10000.0, 16.0), (16, 500.0, 2.0), (32, 500000.0, 1.5)),
    reference=lambda dim, base, factor: ntk_frequencies(dim, base, factor=factor),
    variants=(
        _Variant("exponent missing", lambda d, b, s: _ntk_with_exponent(d, b, s, 1.0),
                 "your new base is base · s: the exponent d/(d-2) is missing, or it was computed with integer "
                 "division, d // (d - 2) = 1 for d > 4 (both give these numbers); then the slowest pair is slowed by "
                 "s^((d-2)/d), a little less than s. The new base is b' = base · s^(d/(d-2)), with d / (d - 2), "
                 "which slows the slowest pair by exactly s and leaves pair 0 unchanged"),
        _Variant("exponent inverted", lambda d, b, s: _ntk_with_exponent(d, b, s, (d - 2) / d),
                 "your exponent is (d-2)/d, the inverse of the right one: the new base is b' = base · s^(d/(d-2)), "
                 "so that the slowest pair, θ_(d/2-1) = b^(-(d-2)/d), is slowed by exactly s"),
        _Variant("base divided", lambda d, b, s: _ntk_with_exponent(d, b, s, -d / (d - 2)),
                 "you divided the base by s^(d/(d-2)): a smaller base makes the pairs faster. NTK-aware scaling "
                 "enlarges the base, b' = base · s^(d/(d-2))"),
        _Variant("PI", lambda d, b, s: _theta(d, b) / s,
                 "these are PI's frequencies, θ_ℓ / s for every pair; NTK-aware scaling changes the base instead, "
                 "b' = base · s^(d/(d-2)), so pair 0 keeps its frequency and the slowest pair is slowed by s"),
        _Variant("exponent", lambda d, b, s: _theta_half_exponent(d, b * s ** (d / (d - 2))), _EXPONENT),
        _Variant("factor ignored", lambda d, b, s: _theta(d, b),
                 "these are the original frequencies: the factor is not applied"),
        _Variant("base ignored", lambda d, b, s: _ntk_with_exponent(d, 10000.0, s, d / (d - 2)),
                 "your function ignores its base argument and uses 10000"),
        _Variant("from one", lambda d, b, s: _shifted_theta(d, b * s ** (d / (d - 2))), _FROM_ONE),
        _Variant("factor on frequencies", lambda d, b, s: _theta(d, b) / s ** (d / (d - 2)),
                 "you divided the frequencies by s^(d/(d-2)): the factor belongs to the base, b' = base · "
                 "s^(d/(d-2)), so that pair 0 keeps θ_0 = 1"),
    ),
    verified=(
        "dimensions 8 to 128, bases 500 to 500000, factors 1.5 to 16",
        "NTK-aware scaling uses the base b' = base · s^(d/(d-2)): pair 0 keeps θ_0 = 1 and the slowest pair is "
        "slowed by exactly s",
    ),
    ladder=lambda setting: _Ladder(1.0, setting[1] * setting[2] ** (setting[0] / (setting[0] - 2)),
                                   (("base", setting[1]), ("s", setting[2]))),
)


@_public
def check_ntk_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's NTK-aware scaling ``fn(dim, base, factor) -> (dim/2,) frequencies``.

    The result must equal :func:`posenc.scaling.ntk_frequencies`, the frequencies of the base
    :math:`b\\,s^{d/(d-2)}`, on five hidden settings (``dim >= 8``). Diagnosed mistakes: the
    exponent ``d/(d-2)`` missing or inverted; the base divided instead of multiplied; PI's
    frequencies instead; the exponent ``ℓ/d`` instead of ``2ℓ/d``; the factor or the base
    ignored; the factor on the frequencies; and, by their effect on the ladder, PI's division
    added to NTK's base, the exponent on the wrong term (``base^(d/(d-2)) · s``); wrong shape;
    exceptions.

    Args:
        fn: the student's function, called as ``fn(dim, base, factor)``.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """
    return _check_rule(fn, _NTK)


# --------------------------------------------------------------------------- dynamic NTK


def _dynamic_variant(
    dim: int, base: float, factor: float, train_len: int, seq_len: int, *, floor: bool = True,
    minus: bool = True, exponent: bool = True, ladder: Callable[[int, float], torch.Tensor] = _theta,
    threshold: float = 1.0, last_index: bool = False, parentheses: str = "", whole_ratio: bool = False,
) -> torch.Tensor:
    current = seq_len - 1 if last_index else seq_len
    length = max(current, threshold * train_len) if floor else current
    subtracted = factor + 1.0 if parentheses else factor - 1.0
    ratio = length // train_len if whole_ratio else length / train_len
    scale = factor * ratio - (subtracted if minus else 0.0)
    if parentheses == "clamped":
        scale = max(scale, 1.0)
    if scale <= 0:
        raise ValueError("no base for a scale <= 0")
    return ladder(dim, base * scale ** (dim / (dim - 2) if exponent else 1.0))


def _dynamic_ladder(dim: int, base: float, factor: float, train_len: int, seq_len: int) -> _Ladder:
    length = max(seq_len, train_len)
    scale = factor * length / train_len - (factor - 1.0)
    terms = (("base", base), ("s_n", scale), ("s", factor), ("n/L", seq_len / train_len))
    return _Ladder(1.0, base * scale ** (dim / (dim - 2)), terms)


_DYNAMIC = _Rule(
    exercise="dynamic NTK frequencies",
    arguments=("dim", "base", "factor", "original_max_position", "seq_len"),
    settings=(
        (64, 10000.0, 2.0, 64, 128), (128, 10000.0, 4.0, 4096, 16384), (32, 500.0, 8.0, 256, 300),
        (16, 10000.0, 2.0, 64, 64), (64, 10000.0, 2.0, 64, 48), (16, 10000.0, 4.0, 256, 100),
        (64, 500000.0, 1.5, 1000, 4500),
    ),
    reference=lambda dim, base, factor, train_len, seq_len: dynamic_ntk_frequencies(
        dim, base, factor=factor, original_max_position=train_len, seq_len=seq_len
    ),
    variants=(
        _Variant("no floor", partial(_dynamic_variant, floor=False),
                 "below the training length you changed the base too: for seq_len <= original_max_position the "
                 "frequencies must be the original ones; use n = max(seq_len, original_max_position)"),
        _Variant("scale without -(s-1)", partial(_dynamic_variant, minus=False),
                 "your scale is s·n/L; the rule of transformers is s·n/L - (s - 1), which is 1 at n = L (no change "
                 "at the training length) and grows with slope s/L beyond"),
        _Variant("static", lambda d, b, s, train_len, n: ntk_frequencies(d, b, factor=s),
                 "these are static NTK frequencies for the factor s, whatever the length: dynamic NTK uses the "
                 "scale s_n = s·n/L - (s - 1) of the current length n = max(seq_len, L)"),
        _Variant("exponent missing", partial(_dynamic_variant, exponent=False),
                 "the base is multiplied by the scale s_n without the exponent d/(d-2), or with it computed by integer "
                 "division, d // (d - 2) = 1 for d > 4: b' = base · s_n^(d/(d-2))"),
        _Variant("factor ignored", lambda d, b, s, train_len, n: _dynamic_variant(d, b, 1.0, train_len, n),
                 "your scale is n/L, without the factor: the rule of transformers is s_n = s·n/L - (s - 1)"),
        _Variant("from one", partial(_dynamic_variant, ladder=_shifted_theta), _FROM_ONE),
        *(_Variant("parentheses", partial(_dynamic_variant, parentheses=how),
                   "your scale is s·n/L - s - 1" + (", floored at 1" if how == "clamped" else "") + ": the "
                   "parentheses around s - 1 are missing, so you subtract s + 1; the scale is s·n/L - (s - 1), which "
                   "is exactly 1 at n = L")
          for how in ("plain", "clamped")),
        _Variant("threshold s L", lambda d, b, s, train_len, n: _dynamic_variant(d, b, s, train_len, n, threshold=s),
                 "your current length is max(seq_len, s·L): the rule takes n = max(seq_len, L), with the training "
                 "length L = original_max_position, not the extended s·L, so that the base grows from L on"),
        _Variant("whole ratio", partial(_dynamic_variant, whole_ratio=True),
                 "your ratio n/L is an integer division, n // L (floor): the scale then moves in steps, too small "
                 "at every length that is not a multiple of L; divide as real numbers, n / L"),
        _Variant("last index", partial(_dynamic_variant, last_index=True),
                 "your current length is seq_len - 1, the last position index: n is the length itself, "
                 "n = max(seq_len, L), so that s_n = s·n/L - (s - 1)"),
        _Variant("static beyond", lambda d, b, s, train_len, n: ntk_frequencies(d, b, factor=s if n > train_len
                                                                               else 1.0),
                 "beyond the training length you use the static factor s, the same at every length beyond it: "
                 "dynamic NTK's scale grows with the current length, s_n = s·n/L - (s - 1) with n = max(seq_len, L)"),
        _Variant("original", lambda d, b, s, train_len, n: _theta(d, b),
                 "these are the original frequencies: beyond the training length the base must grow, "
                 "b' = base · s_n^(d/(d-2)) with s_n = s·n/L - (s - 1)"),
    ),
    verified=(
        "lengths below, at and beyond the training length; dimensions 16 to 128, factors 1.5 to 8",
        "dynamic NTK: with n = max(seq_len, L), the scale s_n = s·n/L - (s - 1) and the base "
        "b' = base · s_n^(d/(d-2)); the original frequencies up to the training length",
    ),
    hints=(
        (lambda setting: setting[4] < setting[3], "short",
         "only the settings with seq_len below the training length failed: up to the training length dynamic NTK "
         "keeps the original frequencies, so take n = max(seq_len, original_max_position)"),
        (lambda setting: setting[4] > setting[3], "long",
         "only the settings with seq_len beyond the training length failed: there the scale is s·n/L - (s - 1) and "
         "the base b' = base · s_n^(d/(d-2))"),
    ),
    ladder=lambda setting: _dynamic_ladder(*setting),
    original_where_scaled=("yours act as a scale s_n of 1 here, while beyond the training length the scale is "
                           "s·n/L - (s - 1) > 1, with the current length n = max(seq_len, L)"),
    scaled_where_original=("up to the training length (seq_len <= L) dynamic NTK keeps the original frequencies: "
                           "with n = max(seq_len, L) the scale s_n = s·n/L - (s - 1) is exactly 1 there"),
)


@_public
def check_dynamic_ntk_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's dynamic NTK ``fn(dim, base, factor, original_max_position, seq_len)``.

    The ``(dim/2,)`` result must equal :func:`posenc.scaling.dynamic_ntk_frequencies` (the rule
    of ``transformers``' ``dynamic`` type) on seven hidden settings, with lengths below, at and
    beyond the training length. Diagnosed mistakes: the base changed below the training length
    (no ``max(seq_len, L)``); the scale ``s n / L`` without ``- (s - 1)``, or with ``- s - 1``
    (parentheses lost); static NTK, whatever the length or beyond ``L`` only; ``max(seq_len, s L)``;
    ``seq_len - 1`` as the length; the exponent ``d/(d-2)`` missing; the factor ignored; the
    original frequencies; wrong shape; exceptions.

    Args:
        fn: the student's function, called as
            ``fn(dim, base, factor, original_max_position, seq_len)``.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """
    return _check_rule(fn, _DYNAMIC)
