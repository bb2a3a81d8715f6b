"""Checkers of the context-extension exercises: one per scaling rule of RoPE's frequencies.

Each rule of Part V maps the ``d/2`` frequencies :math:`\\theta_\\ell = b^{-2\\ell/d}` of a model
trained at length ``L`` to new ones; each checker calls the student's function on hidden settings
(head dimensions from 8 to 128, bases from 500 to 1 000 000, scale factors from 1.5 to 32) and
compares the ``(d/2,)`` result with the reference of :mod:`posenc.scaling`, itself tested against
``transformers``' ``ROPE_INIT_FUNCTIONS``:

- :func:`~posenc.exercises.check_pi_frequencies`: position interpolation;
- :func:`~posenc.exercises.check_ntk_frequencies`: NTK-aware scaling;
- :func:`~posenc.exercises.check_dynamic_ntk_frequencies`: dynamic NTK;
- :func:`~posenc.exercises.check_yarn_frequencies`: YaRN (NTK-by-parts with a ramp in the
  pair index, and its attention factor);
- :func:`~posenc.exercises.check_llama3_frequencies`: Llama 3.1's ``llama3`` rule.

Every function is called with positional arguments in the order its checker documents. A wrong
answer is compared with the typical mistakes of its rule (PI's factor applied the wrong way, the
NTK exponent ``d/(d-2)`` missing, YaRN's ramp reversed, ``llama3``'s blend inverted, ...), and the
report names the first pair that differs, with the expected and the returned frequency.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch

from .._angles import frequencies as _theta
from ..scaling import (
    dynamic_ntk_frequencies,
    llama3_frequencies,
    ntk_frequencies,
    pi_frequencies,
    yarn_frequencies,
)
from .checking import (
    CheckResult,
    _distinct,
    _dtype,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _type_name,
)

__all__ = [
    "check_dynamic_ntk_frequencies",
    "check_llama3_frequencies",
    "check_ntk_frequencies",
    "check_pi_frequencies",
    "check_yarn_frequencies",
]

_RTOL = 2e-5
"""Relative tolerance per frequency: float32 arithmetic passes, a wrong formula does not."""

Frequencies = Callable[..., torch.Tensor]


@dataclass(frozen=True)
class _Variant:
    """A typical mistake: the frequencies it gives for the same arguments, and what to say."""

    key: str
    frequencies: Frequencies
    explanation: str


@dataclass(frozen=True)
class _Rule:
    """What a frequency checker needs: the argument names, the settings, reference and mistakes."""

    exercise: str
    arguments: tuple[str, ...]
    settings: tuple[tuple[Any, ...], ...]
    reference: Frequencies
    variants: tuple[_Variant, ...]
    verified: tuple[str, ...]
    hints: tuple[tuple[Callable[[tuple[Any, ...]], bool], str, str], ...] = ()
    """``(applies to a setting, tag, hint)``: the hint is given when only the tagged settings failed."""


def _as_frequencies(returned: object, call: str, half: int) -> torch.Tensor:
    """The returned frequencies as a float64 ``(d/2,)`` tensor, or a problem saying what is wrong."""
    if isinstance(returned, torch.Tensor):
        got = returned.detach().cpu()
        if got.is_complex() or got.dtype == torch.bool:
            raise _Problem(
                "dtype",
                f"{call} returned dtype {_dtype(got.dtype)}; frequencies are real numbers (a complex result comes "
                "from a negative number raised to a fractional power: is a scale or a base negative?)",
            )
    elif isinstance(returned, (list, np.ndarray)):
        try:
            got = torch.tensor([float(value) for value in np.asarray(returned).reshape(-1)], dtype=torch.float64)
        except (TypeError, ValueError):
            raise _Problem(
                "type", f"{call} returned a {type(returned).__name__} whose items are not all numbers"
            ) from None
    else:
        raise _Problem("type", f"{call} returned {_type_name(returned)}; expected a (d/2,) tensor of frequencies")
    if tuple(got.shape) != (half,):
        hint = ""
        if got.numel() == 2 * half:
            hint = ": one frequency per pair, d/2 of them, not one per coordinate (no repeat_interleave or cat)"
        raise _Problem(
            "shape", f"{call} returned shape {tuple(got.shape)}; expected ({half},), one frequency per pair{hint}"
        )
    return got.double()


def _call_text(rule: _Rule, setting: Sequence[Any]) -> str:
    shown = ", ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                      for name, value in zip(rule.arguments, setting, strict=True))
    return f"fn({shown})"


def _matches(got: torch.Tensor, expected: torch.Tensor) -> bool:
    return bool(torch.isfinite(got).all()) and bool(torch.allclose(got, expected, rtol=_RTOL, atol=0.0))


def _frequency_case(
    session: _Session, rule: _Rule, setting: tuple[Any, ...], yarn: bool = False,
    failures: list[tuple[str, set[str]]] | None = None,
) -> None:
    call = _call_text(rule, setting)
    returned = session.call(call, *setting)
    expected = rule.reference(*setting)
    attention_factor = None
    if yarn and isinstance(returned, tuple) and len(returned) == 2:
        returned, attention_factor = returned
    got = _as_frequencies(returned, call, expected.numel())
    if attention_factor is not None:
        _check_attention_factor(session, attention_factor, setting[2], call)
    if _matches(got, expected):
        return
    pair = int(torch.argmax((~torch.isclose(got, expected, rtol=_RTOL, atol=0.0)).to(torch.uint8)))
    should, was = _distinct(float(expected[pair]), float(got[pair]))
    text = (
        f"{call}: pair ℓ = {pair} (of {expected.numel()}) should have frequency {should}, got {was}"
        f" (ratio got / expected = {_num(float(got[pair] / expected[pair]))})"
    )
    matching = set()
    for variant in rule.variants:
        try:
            candidate = variant.frequencies(*setting)
        except (ValueError, ZeroDivisionError, OverflowError):
            matching.add(f"n/a {variant.key}")  # the mistake cannot be evaluated here: no evidence either way
            continue
        if candidate is not None and not _matches(candidate, expected) and _matches(got, candidate):
            matching.add(variant.key)
    if failures is not None:
        failures.append((text, matching))
    raise _Problem("frequencies", f"{text}. {rule.verified[1]}")


def _check_attention_factor(session: _Session, value: object, factor: float, call: str) -> None:
    expected = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    try:
        got = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        session.problem("attention factor type", f"{call} returned an attention factor {_type_name(value)}; expected "
                        "a number")
        return
    if math.isclose(got, expected, rel_tol=1e-9):
        return
    hints = {
        expected**2: "you returned 1/t = (0.1 ln s + 1)^2; the factor that multiplies cos and sin is its square "
        "root, 0.1 ln s + 1, since it scales queries and keys alike",
        1 / expected: "you returned 1 / (0.1 ln s + 1); the factor multiplies cos and sin, it is 0.1 ln s + 1",
        0.1 * math.log10(factor) + 1: "you took a base-10 logarithm; YaRN's factor uses the natural one, "
        "0.1 ln s + 1",
    }
    hint = next((text for candidate, text in hints.items() if math.isclose(got, candidate, rel_tol=1e-9)),
                "YaRN's attention factor is 0.1 ln s + 1 for s > 1, and 1 otherwise")
    session.problem("attention factor", f"{call}: the attention factor should be {_num(expected)}, got {_num(got)}: "
                    f"{hint}")


def _check_rule(fn: Callable[..., Any], rule: _Rule, yarn: bool = False) -> CheckResult:
    def body(session: _Session) -> list[str]:
        failures: list[tuple[str, set[str]]] = []
        for setting in rule.settings:
            tags = {tag for applies, tag, _ in rule.hints if applies(setting)}
            session.run(partial(_frequency_case, session, rule, setting, yarn, failures), tags)
        # A mistake is named only when it explains every setting whose frequencies were wrong.
        named = [
            variant for variant in rule.variants
            if failures and all(variant.key in matching or f"n/a {variant.key}" in matching for _, matching in failures)
            and any(variant.key in matching for _, matching in failures)
        ]
        if named:
            session.problems.pop("frequencies", None)
            session.problems[named[0].key] = f"{failures[0][0]}: {named[0].explanation}"
        for _, tag, hint in rule.hints:
            if session.failed_exactly_with(tag):
                session.problem(f"{tag} hint", hint)
        return [f"matches the reference on {session.cases} hidden settings", *rule.verified]

    return _run_checker(rule.exercise, fn, body)


def _theta_half_exponent(dim: int, base: float) -> torch.Tensor:
    """``b^(-l/d)``: the exponent without its factor 2."""
    return _theta(dim, math.sqrt(base))


_EXPONENT = "θ_ℓ = base^(-2ℓ/d), ℓ = 0 .. d/2 - 1: the exponent needs the factor 2 (torch.arange(0, d, 2) / d)"
_FROM_ONE = ("your pair index ℓ counts from 1: it runs from 0 to d/2 - 1, so the first pair has θ_0 = 1 "
             "(torch.arange(0, d, 2) / d, not torch.arange(2, d + 2, 2) / d)")


def _shifted_theta(dim: int, base: float) -> torch.Tensor:
    """θ_(ℓ+1): the ladder with the pair index counted from 1."""
    return base ** (-torch.arange(2, dim + 2, 2, dtype=torch.float64) / dim)


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
)


@_public
def check_pi_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's position interpolation ``fn(dim, base, factor) -> (dim/2,) frequencies``.

    The result must equal :func:`posenc.scaling.pi_frequencies`, :math:`b^{-2\\ell/d}/s`, on
    five hidden settings. Diagnosed mistakes: the frequencies multiplied instead of divided by
    the factor; the factor ignored; the base multiplied by the factor; the exponent ``ℓ/d``
    instead of ``2ℓ/d``; the base ignored; one frequency per coordinate instead of per pair;
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
                 "you multiplied the base by s without the exponent d/(d-2): then the slowest pair is slowed by "
                 "s^((d-2)/d), a little less than s. The new base is b' = base · s^(d/(d-2)), which slows the "
                 "slowest pair by exactly s and leaves pair 0 unchanged"),
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
)


@_public
def check_ntk_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's NTK-aware scaling ``fn(dim, base, factor) -> (dim/2,) frequencies``.

    The result must equal :func:`posenc.scaling.ntk_frequencies`, the frequencies of the base
    :math:`b\\,s^{d/(d-2)}`, on five hidden settings (``dim >= 8``). Diagnosed mistakes: the
    exponent ``d/(d-2)`` missing or inverted; the base divided instead of multiplied; PI's
    frequencies instead; the exponent ``ℓ/d`` instead of ``2ℓ/d``; the factor or the base
    ignored; wrong shape; exceptions.

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
) -> torch.Tensor:
    length = max(seq_len, train_len) if floor else seq_len
    scale = factor * length / train_len - ((factor - 1.0) if minus else 0.0)
    if scale <= 0:
        raise ValueError("no base for a scale <= 0")
    return ladder(dim, base * scale ** (dim / (dim - 2) if exponent else 1.0))


_DYNAMIC = _Rule(
    exercise="dynamic NTK frequencies",
    arguments=("dim", "base", "factor", "original_max_position", "seq_len"),
    settings=(
        (64, 10000.0, 2.0, 64, 128), (128, 10000.0, 4.0, 4096, 16384), (32, 500.0, 8.0, 256, 300),
        (16, 10000.0, 2.0, 64, 64), (64, 10000.0, 2.0, 64, 48), (16, 10000.0, 4.0, 256, 100),
        (64, 500000.0, 1.5, 1000, 5000),
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
                 "the base is multiplied by the scale s_n without the exponent d/(d-2): b' = base · s_n^(d/(d-2))"),
        _Variant("factor ignored", lambda d, b, s, train_len, n: _dynamic_variant(d, b, 1.0, train_len, n),
                 "your scale is n/L, without the factor: the rule of transformers is s_n = s·n/L - (s - 1)"),
        _Variant("from one", partial(_dynamic_variant, ladder=_shifted_theta), _FROM_ONE),
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
)


@_public
def check_dynamic_ntk_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check a student's dynamic NTK ``fn(dim, base, factor, original_max_position, seq_len)``.

    The ``(dim/2,)`` result must equal :func:`posenc.scaling.dynamic_ntk_frequencies` (the rule
    of ``transformers``' ``dynamic`` type) on seven hidden settings, with lengths below, at and
    beyond the training length. Diagnosed mistakes: the base changed below the training length
    (no ``max(seq_len, L)``); the scale ``s n / L`` without ``- (s - 1)``; static NTK, whatever
    the length; the exponent ``d/(d-2)`` missing; the factor ignored; the original frequencies;
    wrong shape; exceptions.

    Args:
        fn: the student's function, called as
            ``fn(dim, base, factor, original_max_position, seq_len)``.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """
    return _check_rule(fn, _DYNAMIC)


# --------------------------------------------------------------------------- YaRN


def _yarn_variant(
    dim: int, base: float, factor: float, train_len: int, beta_fast: float, beta_slow: float, *,
    swap: bool = False, invert: bool = False, rounding: bool = True,
    ladder: Callable[[int, float], torch.Tensor] = _theta, factor_power: float = 0.0,
) -> torch.Tensor:
    theta = ladder(dim, base)

    def pair_index(turns: float) -> float:
        return dim * math.log(train_len / (2 * math.pi * turns)) / (2 * math.log(base))

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
    ramp, linear in the number of turns; PI's frequencies; the exponent ``ℓ/d``; an attention
    factor squared, inverted or with a base-10 logarithm; wrong shape; exceptions.

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
    regimes_swapped: bool = False, ramp_in_wavelength: bool = False,
) -> torch.Tensor:
    theta = ladder(dim, base)
    turns = train_len * theta / (2 * math.pi if two_pi else 1.0)
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
                 "the blend is inverted: in the band, γ_ℓ = (L/λ_ℓ - low_freq_factor) / (high_freq_factor - "
                 "low_freq_factor) is the share *kept*, θ'_ℓ = γ_ℓ θ_ℓ + (1 - γ_ℓ) θ_ℓ / s; yours gives γ_ℓ to θ_ℓ / s "
                 "(γ grows with the number of turns, and fast pairs are kept). Swapping low_freq_factor and "
                 "high_freq_factor gives the same frequencies: pairs with λ_ℓ < L / high_freq_factor are kept"),
        _Variant("no clamp", partial(_llama3_variant, clamp=False),
                 "γ_ℓ is not clamped to [0, 1]: outside the band it must be exactly 0 (θ_ℓ / s) or 1 (θ_ℓ); "
                 "without the clamp the fast pairs are sped up and the slow ones slowed by more than s"),
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
