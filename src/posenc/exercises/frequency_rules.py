"""The machinery of the context-extension checkers (:mod:`posenc.exercises.scaling`,
:mod:`posenc.exercises.by_parts`): a rule's reference, settings and typical mistakes
(``_Rule``), the check of the returned ``(d/2,)`` frequencies on every hidden setting, and the
mistakes that every rule can make (the exponent without its factor 2, the pair index counted
from 1)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch

from .._angles import frequencies as _theta
from .checking import CheckResult, _distinct, _dtype, _num, _Problem, _run_checker, _Session, _type_name

__all__: list[str] = []


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
