"""The machinery of the context-extension checkers (:mod:`posenc.exercises.scaling`,
:mod:`posenc.exercises.by_parts`): a rule's reference, settings and typical mistakes
(``_Rule``), the check of the returned ``(d/2,)`` frequencies on every hidden setting, and the
mistakes that every rule can make (the exponent without its factor 2, the pair index counted
from 1).

A mistake is named when it explains every setting that failed: its model equals the answer, or
reproduces every wrong pair and most of its own wrong pairs (the same slip written another way).
Otherwise the broken property is said: for the rules that rescale every pair alike, the answer's
ladder ``A · B^(-2ℓ/d)`` against the expected one (``_ladder_problem``); for the rules by parts,
which pairs are kept, divided or blended (``_parts_problem``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch

from .._angles import frequencies as _theta
from ._readings import _argument_use, _Case
from ._transforms import _probing
from .checking import (
    CheckResult,
    _distinct,
    _dtype,
    _num,
    _Problem,
    _run_checker,
    _runs_text,
    _Session,
    _type_name,
)

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
    ladder: Callable[[tuple[Any, ...]], _Ladder] | None = None
    """For the rules that rescale every pair alike: the expected ladder ``A · B^(-2ℓ/d)`` of a setting."""
    by_parts: bool = False
    """For the rules that keep the fast pairs and divide the slow ones by the factor (YaRN, llama3)."""
    original_where_scaled: str = ""
    """What it means that a setting which the rule rescales got the original frequencies ``base^(-2ℓ/d)``."""
    scaled_where_original: str = ""
    """What it means that a setting which the rule leaves alone (the original frequencies) got rescaled ones."""


@dataclass(frozen=True)
class _Ladder:
    """A geometric ladder ``A · B^(-2ℓ/d)``, with names for the numbers it is made of.

    ``terms`` name the quantities a student's base may be built from (``base``, ``s``, ``s_n``), so
    that a wrong base can be said in the student's terms, e.g. ``base · s`` instead of
    ``base · s^(d/(d-2))``.
    """

    factor: float
    base: float
    terms: tuple[tuple[str, float], ...]


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


def _explains(got: torch.Tensor, candidate: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether ``candidate`` reproduces every pair ``got`` has wrong, and most of the mistake's characteristic pairs.

    A mistake written another way often differs from its model only where the model's mistake has
    no effect on the student's code. The model is accepted as the explanation when it reproduces
    every wrong pair and more than half of the pairs where it differs from the reference, so that a
    mistake that merely shares a few wrong pairs with the model is not named after it.
    """
    if not bool(torch.isfinite(got).all()):
        return False
    wrong = ~torch.isclose(got, expected, rtol=_RTOL, atol=0.0)
    if not bool(wrong.any()):
        return False
    agree = torch.isclose(got, candidate, rtol=_RTOL, atol=0.0)
    characteristic = ~torch.isclose(candidate, expected, rtol=_RTOL, atol=0.0)
    return bool(agree[wrong].all()) and 2 * int((agree & characteristic).sum()) > int(characteristic.sum())


def _power_text(name: str, exponent: float, dim: int) -> str:
    known = {1.0: "", 0.5: "^(1/2)", 2.0: "^2", -1.0: "^(-1)", -2.0: "^(-2)", dim / (dim - 2): "^(d/(d-2))",
             (dim - 2) / dim: "^((d-2)/d)", -dim / (dim - 2): "^(-d/(d-2))", 2 * dim / (dim - 2): "^(2d/(d-2))",
             dim / (2 * (dim - 2)): "^(d/(2(d-2)))"}
    for value, text in known.items():
        if math.isclose(exponent, value, rel_tol=1e-6):
            return f"{name}{text}"
    return f"{name}^{_num(exponent)}"


def _as_terms(value: float, terms: tuple[tuple[str, float], ...], dim: int) -> str | None:
    """``value`` written as a product of powers of the named terms (``base · s^(d/(d-2))``), if it is one."""
    if value <= 0:
        return None
    exponents = (1.0, 0.5, 2.0, -1.0, -2.0, dim / (dim - 2), (dim - 2) / dim, -dim / (dim - 2),
                 2 * dim / (dim - 2), dim / (2 * (dim - 2)))
    logs = [(name, math.log(number)) for name, number in terms if number > 0 and not math.isclose(number, 1.0)]
    target = math.log(value)
    if abs(target) < 1e-9:
        return "1"
    candidates: list[list[tuple[str, float]]] = [[(name, e)] for name, _ in logs for e in exponents]
    candidates += [[(first, e1), (second, e2)] for i, (first, _) in enumerate(logs) for second, _ in logs[i + 1:]
                   for e1 in exponents for e2 in exponents]
    values = dict(logs)
    for candidate in candidates:
        if math.isclose(sum(e * values[name] for name, e in candidate), target, rel_tol=1e-6, abs_tol=1e-9):
            return " · ".join(_power_text(name, e, dim) for name, e in candidate)
    return None


def _ladder_text(factor: float, base: float, terms: tuple[tuple[str, float], ...], dim: int) -> str:
    factor_text = _as_terms(factor, terms, dim) or _num(factor)
    base_text = _as_terms(base, terms, dim)
    base_text = f"{base_text} = {_num(base)}" if base_text and base_text != _num(base) else _num(base)
    return f"{'' if factor_text == '1' else factor_text + ' · '}B^(-2ℓ/d) with B = {base_text}"


def _ladder_problem(got: torch.Tensor, expected: _Ladder, dim: int, base: float) -> str | None:
    """What is wrong with a ladder ``A · B^(-2ℓ/d)``: its direction, its factor, its base, in the student's terms."""
    if bool((got <= 0).any()) or got.numel() < 3:
        return None
    logs = got.log()
    half = got.numel()
    slope = float(logs[-1] - logs[0]) / (half - 1)
    fitted = logs[0] + slope * torch.arange(half, dtype=torch.float64)
    if not bool(torch.allclose(logs, fitted, rtol=0.0, atol=1e-5)):
        return None  # not a geometric ladder: described by its first wrong pair
    factor, effective = float(got[0]), math.exp(-slope * dim / 2)
    terms = expected.terms
    scales = dict(terms)
    # With a scale that depends on the length, the student's numbers said in the rule's terms are a coincidence.
    yours = _ladder_text(factor, effective, terms if "s_n" not in scales else terms[:1], dim)
    wanted = _ladder_text(expected.factor, expected.base, terms, dim)
    if slope > 0:
        turns = factor / (2 * math.pi)
        wavelength = math.isclose(turns, 1.0, rel_tol=1e-4) or _as_terms(turns, terms, dim) is not None
        if wavelength:
            return ("your values grow with the pair index ℓ, from 2π-sized ones: these are wavelengths "
                    "λ_ℓ = 2π / θ_ℓ, not frequencies; return the frequencies θ_ℓ (they fall from pair 0 to the last)")
        first, last = _num(float(got[0])), _num(float(got[-1]))
        return (f"your frequencies grow with the pair index ℓ ({first} for pair 0, {last} for the last): the "
                "exponent has lost its minus sign. Frequencies fall with ℓ, base^(-2ℓ/d) = 1 / base^(2ℓ/d)")
    problems = []
    if not math.isclose(factor, expected.factor, rel_tol=1e-4):
        ratio = factor / expected.factor
        size = _as_terms(ratio if ratio > 1 else 1 / ratio, terms, dim)
        if size is None:
            how = f" (every frequency {_num(ratio)} times the expected one)"
        elif not math.isclose(expected.factor, 1.0) and math.isclose(factor, 1.0, rel_tol=1e-9):
            how = f": the factor that divides every frequency, {_as_terms(1 / expected.factor, terms, dim)}, is missing"
        elif not math.isclose(expected.factor, 1.0) and math.isclose(factor, 1 / expected.factor, rel_tol=1e-6):
            how = (f": you multiply every frequency by {_as_terms(factor, terms, dim)} where the rule divides "
                   "by it")
        elif ratio < 1:
            how = f": every frequency is also divided by {size}, once too often"
        else:
            how = f": every frequency is {size} times too large"
        problems.append(f"pair 0 is {_num(factor)} instead of {_num(expected.factor)}{how}")
    if not math.isclose(effective, expected.base, rel_tol=1e-4):
        if math.isclose(effective, math.sqrt(expected.base), rel_tol=1e-4):
            problems.append("the ladder falls half as fast as it should: the exponent is ℓ/d instead of 2ℓ/d "
                            "(torch.arange(d/2) / d): it needs the factor 2, torch.arange(0, d, 2) / d (or the base "
                            "is its square root, √base: both give these numbers)")
        elif math.isclose(effective ** ((dim - 2) / dim), expected.base, rel_tol=1e-4):
            problems.append("the last pair ℓ = d/2 - 1 gets exponent 1 instead of (d-2)/d: the exponent is "
                            "2ℓ/(d-2), as torch.linspace(0, 1, d/2) gives; use torch.arange(0, d, 2) / d")
        elif "s" in scales and any(math.isclose(effective, base ** power, rel_tol=1e-4)
                                   for power in (1 / scales["s"], scales["s"])):
            power = "1/s" if math.isclose(effective, base ** (1 / scales["s"]), rel_tol=1e-4) else "s"
            written = "base^(-2ℓ/(d·s))" if power == "1/s" else "base^(-2ℓ·s/d)"
            problems.append(f"the ladder falls with B = base^({power}): the factor s went into the exponent, "
                            f"{written}, which changes how fast the ladder falls; s belongs outside the exponent "
                            "(on the frequencies, or on the base)")
        else:
            read_back = ""
            # A product of the right quantities says that an exponent moved; with a scale s_n that depends on the
            # length, such a product is a coincidence of the setting, and the scale read back says more.
            said = None if "s_n" in scales else _as_terms(effective, terms, dim)
            if "s_n" in scales and effective > scales["base"]:
                scale = (effective / scales["base"]) ** ((dim - 2) / dim)
                read_back = (f"; read as base · s_n^(d/(d-2)), your scale s_n is {_num(scale)} where the rule's is "
                             f"{_num(scales['s_n'])}")
            elif "s" in scales and scales["s"] > 1 and effective > scales["base"] and said is None:
                exponent = math.log(effective / scales["base"]) / math.log(scales["s"])
                read_back = f"; read as base · s^e, your exponent e is {_exponent_text(exponent, dim)}"
            problems.append(f"the ladder falls with the wrong base, B = {said or _num(effective)} instead of "
                            f"{_as_terms(expected.base, terms, dim) or _num(expected.base)}"
                            + (" (check which term carries which exponent)" if said else read_back))
    if not problems:
        return None
    return f"your frequencies are {yours}; expected {wanted}: " + "; ".join(problems)


def _exponent_text(exponent: float, dim: int) -> str:
    """An exponent of the factor said as a fraction of d when it is a usual one (d/(d-1), (d-2)/d, ...)."""
    candidates = {"d/(d-2)": dim / (dim - 2), "(d-2)/d": (dim - 2) / dim, "d/(d-1)": dim / (dim - 1),
                  "(d-1)/d": (dim - 1) / dim, "d/(d+2)": dim / (dim + 2), "(d+2)/d": (dim + 2) / dim,
                  "(d-2)/(d-4)": (dim - 2) / (dim - 4) if dim > 4 else math.nan, "2": 2.0, "1/2": 0.5}
    named = next((text for text, value in candidates.items() if math.isclose(exponent, value, rel_tol=1e-6)), None)
    return (f"{_num(exponent)} = {named} where the rule's is d/(d-2) = {_num(dim / (dim - 2))}" if named
            else f"{_num(exponent)} where the rule's is d/(d-2) = {_num(dim / (dim - 2))}")


def _share_kept(values: torch.Tensor, theta: torch.Tensor, factor: float) -> torch.Tensor:
    """Where each pair sits between θ_ℓ / s (0) and θ_ℓ (1)."""
    return (values / theta - 1 / factor) / (1 - 1 / factor)


def _pairs_text(mask: torch.Tensor) -> str:
    pairs = [int(i) for i in mask.nonzero().flatten()]
    return _runs_text(pairs) if pairs else "none"


def _edge_shift(mine: torch.Tensor, right: torch.Tensor) -> int:
    """By how many pairs a contiguous run of pairs (kept, or divided) is longer than it should be."""
    return int(mine.sum()) - int(right.sum())


def _parts_problem(got: torch.Tensor, expected: torch.Tensor, dim: int, base: float, factor: float) -> str | None:
    """What is wrong with a by-parts rule: which pairs are kept, divided, blended, and the blend's direction."""
    theta = _theta(dim, base)
    if factor <= 1:
        return None
    mine, right = _share_kept(got, theta, factor), _share_kept(expected, theta, factor)
    tol = 1e-6
    outside = (mine < -1e-4) | (mine > 1 + 1e-4)
    if bool(outside.any()):
        pair = int(outside.nonzero()[0])
        return (f"pair {pair} is not between θ_ℓ / s and θ_ℓ (it has {_num(float(got[pair] / theta[pair]))} θ_ℓ): "
                "every frequency must lie between the divided θ_ℓ / s and the kept θ_ℓ: outside the band use exactly "
                "θ_ℓ (fast pairs) or θ_ℓ / s (slow pairs); a frequency leaves this interval when the factor is used "
                "the wrong way (θ_ℓ · s for θ_ℓ / s) or when a blend's share is not clamped to [0, 1]")
    kept, divided = mine > 1 - tol, mine < tol
    kept_right, divided_right = right > 1 - tol, right < tol
    wrong = ~torch.isclose(got, expected, rtol=_RTOL, atol=0.0)
    if bool(torch.isclose(mine, 1 - right, atol=1e-6).all()):
        return ("your pairs are treated the wrong way round: the fast pairs (small ℓ, many turns within the "
                "training length) must keep θ_ℓ and the slow ones get θ_ℓ / s; yours divide the fast pairs and keep "
                "the slow ones")
    if bool((kept & divided_right).any()) and bool((divided & kept_right).any()):
        return ("your pairs are treated the wrong way round: the fast pairs (small ℓ) must keep θ_ℓ and the slow ones "
                "get θ_ℓ / s")
    band = ~kept_right & ~divided_right
    if bool(torch.equal(kept, kept_right)) and bool(torch.equal(divided, divided_right)):
        if bool(torch.isclose(mine[band], 1 - right[band], atol=1e-6).all()):
            return (f"the pairs outside the band are right, but inside it (pairs {_pairs_text(band)}) your blend is "
                    "inverted: the share kept, θ_ℓ's weight, falls from 1 at the fast end of the band to 0 at the "
                    "slow end; yours rises")
        pair = int((wrong & band).nonzero()[0]) if bool((wrong & band).any()) else int(wrong.nonzero()[0])
        return (f"the kept and divided pairs are right, but inside the band (pairs {_pairs_text(band)}) your blend "
                f"differs: at pair {pair} the share kept should be {_num(float(right[pair]))}, yours is "
                f"{_num(float(mine[pair]))}")
    if bool(band.any()) and not bool((~kept & ~divided).any()):
        return (f"every pair of yours is either kept or divided, none blended: in the band (pairs {_pairs_text(band)}) "
                "the rule blends θ_ℓ and θ_ℓ / s, with a share that moves smoothly from 1 to 0 across it")
    edges = _edge_shift(kept, kept_right), _edge_shift(divided, divided_right)
    if all(abs(edge) <= 1 for edge in edges) and any(edges):
        which = "fast" if edges[0] else "slow"
        return (f"your band's {which} edge is one pair off: you keep pairs {_pairs_text(kept)} and divide pairs "
                f"{_pairs_text(divided)}, expected kept {_pairs_text(kept_right)} and divided "
                f"{_pairs_text(divided_right)}: the bounds of the ramp are rounded outwards, floor at the fast end and "
                "ceil at the slow end (int() truncates, round() rounds to the nearest: both move an edge by a pair)")
    return (f"your band is at the wrong pairs: you keep pairs {_pairs_text(kept)} and divide pairs "
            f"{_pairs_text(divided)}, expected kept {_pairs_text(kept_right)} and divided "
            f"{_pairs_text(divided_right)}: "
            "the boundary between the parts is misplaced (check the number of turns L/λ_ℓ = L θ_ℓ / (2π), and that "
            "ℓ is the pair index 0 .. d/2 - 1)")


def _property_problem(rule: _Rule, setting: tuple[Any, ...], got: torch.Tensor, expected: torch.Tensor) -> str | None:
    if not bool(torch.isfinite(got).all()):
        pair = int((~torch.isfinite(got)).nonzero()[0])
        return (f"pair {pair} is {float(got[pair])}: a division by zero (a ramp whose two bounds coincide, a "
                "wavelength of an infinite period) or a power of a non-positive number")
    dim, base = int(setting[0]), float(setting[1])
    original = _theta(dim, base)
    kept_original, is_original = _matches(got, original), _matches(expected, original)
    if rule.original_where_scaled and kept_original and not is_original:
        return ("your frequencies are the original ones, base^(-2ℓ/d), where the rule rescales them: "
                f"{rule.original_where_scaled}")
    if rule.scaled_where_original and is_original and not kept_original:
        return f"your frequencies are rescaled where the rule keeps the original ones: {rule.scaled_where_original}"
    if rule.ladder is not None:
        return _ladder_problem(got, rule.ladder(setting), dim, base)
    if rule.by_parts:
        return _parts_problem(got, expected, dim, base, float(setting[2]))
    return None


def _frequency_case(
    session: _Session, rule: _Rule, setting: tuple[Any, ...], yarn: bool = False,
    failures: list[tuple[str, set[str], set[str]]] | None = None,
) -> None:
    call = _call_text(rule, setting)
    returned = session.call(call, *setting)
    expected = rule.reference(*setting)
    attention_factor = None
    if yarn and isinstance(returned, tuple) and len(returned) == 2:
        returned, attention_factor = returned
        if isinstance(returned, (int, float)) and isinstance(attention_factor, (torch.Tensor, np.ndarray, list)):
            raise _Problem(
                "pair order",
                f"{call} returned (a number, a tensor of {len(attention_factor)} values): the pair is in the other "
                "order; return (frequencies, attention_factor), the frequencies first, as posenc.yarn_frequencies "
                "does",
            )
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
    exact, explaining = set(), set()
    for variant in rule.variants:
        try:
            candidate = variant.frequencies(*setting)
        except (ValueError, ZeroDivisionError, OverflowError):
            exact.add(f"n/a {variant.key}")  # the mistake cannot be evaluated here: no evidence either way
            explaining.add(f"n/a {variant.key}")
            continue
        if candidate is None or _matches(candidate, expected):
            continue
        if _matches(got, candidate):
            exact.add(variant.key)
        if _explains(got, candidate, expected):
            explaining.add(variant.key)
    if failures is not None:
        failures.append((text, exact, explaining))
    found = _property_problem(rule, setting, got, expected)
    if found:
        raise _Problem("frequencies", f"{text}: {found}. {rule.verified[1]}")
    raise _Problem("values", f"{text}. {rule.verified[1]}")


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
        failures: list[tuple[str, set[str], set[str]]] = []
        passed = []
        for setting in rule.settings:
            tags = {tag for applies, tag, _ in rule.hints if applies(setting)}
            if session.run(partial(_frequency_case, session, rule, setting, yarn, failures), tags):
                passed.append(setting)
        # A mistake is named only when it explains every setting whose frequencies were wrong: first one that
        # reproduces them exactly, else one that reproduces every wrong pair (its characteristic pairs); and never
        # one that would have shown in a setting the answer got right.
        variants = [variant for variant in rule.variants if not _shows_in(variant, rule, passed)]
        named = _named(variants, [(text, exact) for text, exact, _ in failures]) or _named(
            variants, [(text, explaining) for text, _, explaining in failures])
        if named:
            session.problems.pop("frequencies", None)
            session.problems.pop("values", None)
            session.problems[named.key] = f"{failures[0][0]}: {named.explanation}"
        for _, tag, hint in rule.hints:
            if session.failed_exactly_with(tag):
                session.problem(f"{tag} hint", hint)
        if failures and not named:
            unused = _unused_rule_arguments(fn, rule, yarn)
            if unused:
                session.problems = {"unused": unused, **session.problems}
        return [f"matches the reference on {session.cases} hidden settings", *rule.verified]

    cases = [_Case(tuple(setting), _call_text(rule, setting)) for setting in rule.settings]
    return _run_checker(rule.exercise, fn, body, reading=_probing(
        fn, ("values", "frequencies"), rule.reference, cases, "the frequencies", rule.arguments, atol=0.0, rtol=_RTOL,
        output=lambda value: value[0] if yarn and isinstance(value, tuple) and len(value) == 2 else value))


def _unused_rule_arguments(fn: Callable[..., Any], rule: _Rule, yarn: bool) -> str | None:
    """The arguments that no hidden setting shows the answer using (each changed alone), said as a sentence."""

    def frequencies(*setting: Any) -> Any:
        returned = fn(*setting)
        return returned[0] if yarn and isinstance(returned, tuple) and len(returned) == 2 else returned

    unused: dict[str, bool] = {}
    for setting in rule.settings:
        case = _Case(tuple(setting), _call_text(rule, setting))
        for name, used in _argument_use(frequencies, rule.reference, case, "the frequencies", rule.arguments).items():
            unused[name] = unused.get(name, True) and not used
    names = [name for name, is_unused in unused.items() if is_unused]
    if not names:
        return None
    listed = " and ".join(names)
    return (f"changing {listed} alone leaves your frequencies exactly as they were, on every hidden setting, while "
            f"the rule's frequencies change: your frequencies do not depend on {listed} (your function does not use "
            f"{'them' if len(names) > 1 else 'it'}, or uses {'them' if len(names) > 1 else 'it'} where "
            f"{'they have' if len(names) > 1 else 'it has'} no effect)")


def _shows_in(variant: _Variant, rule: _Rule, settings: list[tuple[Any, ...]]) -> bool:
    """Whether the mistake changes the frequencies of one of these settings (which the answer got right)."""
    for setting in settings:
        try:
            candidate = variant.frequencies(*setting)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if candidate is not None and not _matches(candidate, rule.reference(*setting)):
            return True
    return False


def _named(variants: list[_Variant], failures: list[tuple[str, set[str]]]) -> _Variant | None:
    return next((
        variant for variant in variants
        if failures and all(variant.key in matching or f"n/a {variant.key}" in matching for _, matching in failures)
        and any(variant.key in matching for _, matching in failures)
    ), None)


def _theta_half_exponent(dim: int, base: float) -> torch.Tensor:
    """``b^(-l/d)``: the exponent without its factor 2."""
    return _theta(dim, math.sqrt(base))


_EXPONENT = ("θ_ℓ = base^(-2ℓ/d), ℓ = 0 .. d/2 - 1: the exponent needs the factor 2 (torch.arange(0, d, 2) / d), or, "
             "if yours has it, the base is its square root (both give these numbers)")
_FROM_ONE = ("your pair index ℓ counts from 1: it runs from 0 to d/2 - 1, so the first pair has θ_0 = 1 "
             "(torch.arange(0, d, 2) / d, not torch.arange(2, d + 2, 2) / d)")


def _shifted_theta(dim: int, base: float) -> torch.Tensor:
    """θ_(ℓ+1): the ladder with the pair index counted from 1."""
    return base ** (-torch.arange(2, dim + 2, 2, dtype=torch.float64) / dim)
