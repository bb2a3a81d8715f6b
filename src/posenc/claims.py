"""The claims ledger: every measured fact the prose states, checked against the value behind it.

A chapter creates one :class:`Ledger` and states each claim of its prose through it::

    claims = Ledger("07_rope_long_range")
    claims.between("bf16-noise", "bf16 rotation noise is about 1-2 % of a typical score",
                   noise, 0.01, 0.025)

The claim is checked at once: if the value is outside its bounds the cell fails with a
:class:`ClaimError` that names the claim, the sentence, the value and the bound. A claim that
holds is recorded with its chapter, label, words, value, bounds and *margin* (how far inside
its bounds the value is, as a share of the bounds' width), and, in a notebook, glued under its
label with myst-nb's glue format, so the prose shows this build's number:
``{glue:text}`bf16-noise:.1%```. The book's build collects every recorded claim into
``claims.json``; the shifted-seed runs collect their values too, and the build report lists the
claims whose margin is thin (:data:`FRAGILE_MARGIN`).

Forms, each taking a label (lower-case letters, digits and ``-``), the words the claim backs,
and the measured value:

- :meth:`Ledger.between` ``low <= value <= high``;
- :meth:`Ledger.at_least` ``value >= bound`` and :meth:`Ledger.at_most` ``value <= bound``;
- :meth:`Ledger.close_to` ``|value - target| <= tolerance`` (absolute or relative);
- :meth:`Ledger.agree` several printed gaps (``max |A - B|``), each at most a tolerance;
- :meth:`Ledger.equals` ``value == expected`` (numbers, strings, lists), no margin;
- :meth:`Ledger.holds` a boolean, with the values that decide it, no margin.

The numeric forms accept one number or several (a list, array or tensor: one value per seed,
per position, ...); several must each satisfy the bound, and the claim's margin is the smallest.
:meth:`Ledger.glue` glues a measured number the prose states without bounding it.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

__all__ = [
    "CLAIM_METADATA_KEY",
    "FRAGILE_MARGIN",
    "Claim",
    "ClaimError",
    "Ledger",
]

#: A claim whose margin is below this share of its bounds' width is listed as fragile.
FRAGILE_MARGIN = 0.1

#: Key, in the metadata of a glued output, of the claim's record (read by the build's tooling).
CLAIM_METADATA_KEY = "posenc_claim"

_GLUE_PREFIX = "application/papermill.record/"  # myst-nb's prefix of outputs glued without display
_LABEL = re.compile(r"[a-z0-9][a-z0-9-]*")
_MAX_RECORDED_VALUES = 1000


class ClaimError(AssertionError):
    """A claim of the prose does not hold for the measured value."""


@dataclass(frozen=True)
class Claim:
    """One checked claim: what the prose says, the value measured, its bounds, and how it fared.

    Attributes:
        chapter: the ledger's chapter, e.g. ``"07_rope_long_range"``.
        label: the claim's label, unique in its chapter; also its glue key.
        words: the sentence (or part of one) of the prose that the claim backs.
        form: ``"between"``, ``"at_least"``, ``"at_most"``, ``"close_to"``, ``"equals"`` or
            ``"holds"``.
        value: the measured value: a number, or for several values the one with the smallest
            margin; for ``equals`` and ``holds``, what was compared.
        bounds: the bounds, by name: ``low`` and/or ``high`` (numeric forms; ``close_to`` also
            records ``target`` and ``tolerance``), ``expected`` (``equals``) or the deciding
            ``values`` (``holds``).
        held: whether the claim held (a ledger raises on a claim that does not, after recording it).
        margin: how far inside its bounds the value lies, as a share of the bounds' width (of
            ``|bound|`` for one-sided bounds); None where no width exists (``equals``, ``holds``,
            a one-sided bound of 0).
        values: every measured value, when several were given (at most 1000 are kept).
        count: how many values were measured (1 for a single value).
    """

    chapter: str
    label: str
    words: str
    form: str
    value: Any
    bounds: dict[str, Any]
    held: bool
    margin: float | None
    values: list[Any] | None = None
    count: int = 1

    @property
    def fragile(self) -> bool:
        """True when the claim's margin is below :data:`FRAGILE_MARGIN` of its bounds' width."""
        return self.margin is not None and self.margin < FRAGILE_MARGIN

    def to_json(self) -> dict[str, Any]:
        """The claim as a JSON-ready dictionary (the record the build collects)."""
        return {
            "chapter": self.chapter,
            "label": self.label,
            "words": self.words,
            "form": self.form,
            "value": self.value,
            "bounds": self.bounds,
            "held": self.held,
            "margin": self.margin,
            "values": self.values,
            "count": self.count,
        }

    def describe_bounds(self) -> str:
        """The bounds in words, e.g. ``"between 0.01 and 0.025"``."""
        b = self.bounds
        if self.form == "between":
            return f"between {b['low']:.6g} and {b['high']:.6g}"
        if self.form == "at_least":
            return f"at least {b['low']:.6g}"
        if self.form == "at_most":
            return f"at most {b['high']:.6g}"
        if self.form == "close_to":
            return f"within {b['tolerance']:.3g} of {b['target']:.6g}"
        if self.form == "equals":
            return f"equal to {b['expected']!r}"
        return "true"


@dataclass
class Ledger:
    """The claims of one chapter, checked as they are stated and recorded for the build.

    Args:
        chapter: the chapter's name, conventionally its notebook's file name without
            ``.ipynb`` (``"07_rope_long_range"``).
        trial: if True, a *trial* ledger: it checks and records every claim but neither raises
            on one that does not hold nor glues anything, so that the claims a chapter states on
            one set of measurements can be tried on another (chapter 8 tries its matrix's claims
            on the same models measured earlier in training) and :meth:`failed` says which break.

    Raises:
        TypeError: if ``chapter`` is not a string or ``trial`` not a bool.
        ValueError: if ``chapter`` is empty.

    The forms return nothing, so a claim that ends a notebook cell adds no output to it. A label
    may be stated once per run; stating it again from a later notebook cell execution (a re-run
    cell) replaces the earlier record.
    """

    chapter: str
    trial: bool = False
    claims: dict[str, Claim] = field(default_factory=dict, init=False, repr=False)
    _stated_in: dict[str, int | None] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.chapter, str):
            raise TypeError(f"chapter must be a string such as '07_rope_long_range', got {type(self.chapter).__name__}")
        if not self.chapter.strip():
            raise ValueError("chapter must be a non-empty string such as '07_rope_long_range'")
        if not isinstance(self.trial, bool):
            raise TypeError(f"trial must be a bool, got {type(self.trial).__name__}")

    # ---- the forms --------------------------------------------------------------------------

    def between(self, label: str, words: str, value: object, low: float, high: float) -> None:
        """Claim ``low <= value <= high`` (for several values: each of them).

        Args:
            label: the claim's label and glue key: lower-case letters, digits and ``-``.
            words: the words of the prose the claim backs.
            value: a real number, or several (a sequence, array or tensor of real numbers).
            low, high: finite bounds with ``low < high``.

        Raises:
            TypeError: if an argument has the wrong type (a bool is not a number here).
            ValueError: if the label is malformed or already stated, the words are empty,
                ``value`` is empty, or the bounds are not finite with ``low < high``.
            ClaimError: if a value is outside ``[low, high]`` or is NaN.
        """
        low, high = _finite("low", low), _finite("high", high)
        if not low < high:
            raise ValueError(f"between needs low < high, got low={low!r}, high={high!r}")
        self._interval(label, words, value, "between", {"low": low, "high": high})

    def at_least(
        self, label: str, words: str, value: object, bound: float, *, scale: float | None = None,
        decimals: int | None = None,
    ) -> None:
        """Claim ``value >= bound`` (for several values: each of them).

        Args:
            label, words, value: as for :meth:`between`.
            bound: the finite lower bound.
            scale: the width the margin is measured against: the margin is
                ``(value - bound) / scale``. By default ``|bound|`` (and no margin for a bound of
                0). Give the natural room of the quantity where ``|bound|`` is not it, e.g.
                ``scale=0.06`` for an accuracy of at least 0.94 (the room up to 1).
            decimals: for several values, the decimals the prose shows ``label-min`` and
                ``label-max`` with (2 for ``:.2f`` or ``:.0%``): they are then glued rounded
                outwards, the minimum down and the maximum up, so that "0.86 or more" or "at most
                0.87" stays true of the values once rounded. By default they are glued as measured.

        Raises:
            TypeError, ValueError: as for :meth:`between`, and if ``bound`` is not finite,
                ``scale`` is not a finite number > 0 or ``decimals`` is not an integer ≥ 0.
            ClaimError: if a value is below ``bound`` or is NaN.
        """
        self._one_sided(label, words, value, bound, scale, "at_least", decimals)

    def at_most(
        self, label: str, words: str, value: object, bound: float, *, scale: float | None = None,
        decimals: int | None = None,
    ) -> None:
        """Claim ``value <= bound`` (for several values: each of them).

        Args:
            label, words, value: as for :meth:`between`.
            bound: the finite upper bound.
            scale: the width the margin is measured against: the margin is
                ``(bound - value) / scale``; by default ``|bound|`` (no margin for a bound of 0).
            decimals: as for :meth:`at_least`.

        Raises:
            TypeError, ValueError: as for :meth:`at_least`.
            ClaimError: if a value is above ``bound`` or is NaN.
        """
        self._one_sided(label, words, value, bound, scale, "at_most", decimals)

    def close_to(
        self, label: str, words: str, value: object, target: float, *, abs_tol: float = 0.0, rel_tol: float = 0.0
    ) -> None:
        """Claim ``|value - target| <= max(abs_tol, rel_tol * |target|)`` (each value, for several).

        This is :meth:`between` on ``[target - tolerance, target + tolerance]``, and its margin is
        measured the same way (a value equal to the target has margin 0.5).

        Raises:
            TypeError, ValueError: as for :meth:`between`, and if ``target`` is not finite or the
                tolerances are negative, not finite, or both 0.
            ClaimError: if a value is further than the tolerance from the target, or is NaN.
        """
        target = _finite("target", target)
        abs_tol, rel_tol = _finite("abs_tol", abs_tol), _finite("rel_tol", rel_tol)
        if abs_tol < 0 or rel_tol < 0:
            raise ValueError(f"tolerances must be >= 0, got abs_tol={abs_tol!r}, rel_tol={rel_tol!r}")
        tolerance = max(abs_tol, rel_tol * abs(target))
        if tolerance == 0:
            raise ValueError("close_to needs a tolerance: give abs_tol > 0, or rel_tol > 0 with a target other than 0")
        bounds = {"low": target - tolerance, "high": target + tolerance, "target": target, "tolerance": tolerance}
        self._interval(label, words, value, "close_to", bounds)

    def agree(self, label: str, words: str, gaps: Mapping[str, object], below: float) -> None:
        """Claim that computations agree: print each gap, then claim every gap is at most ``below``.

        The chapters' "these agree to rounding" checks in one call; each gap is printed as a row
        of :func:`posenc.utils.report`, in order::

            claims.agree("rope-vs-hf", "our rotation matches transformers'",
                         {"max |ours - HF|": max_abs_diff(ours, theirs)}, 1e-6)

        Args:
            label, words: as for :meth:`between`.
            gaps: the printed description of each gap, and the gap (a real number or a
                one-element tensor), in the order to print them.
            below: the tolerance, a finite number > 0; the margin is ``(below - gap) / below``.

        Raises:
            TypeError: if ``gaps`` is not a mapping of strings to numbers, or ``below`` is not a number.
            ValueError: if ``gaps`` is empty, or as for :meth:`between`.
            ClaimError: if a gap is above ``below`` or is NaN.
        """
        from .utils import report

        if not isinstance(gaps, Mapping):
            raise TypeError(f"gaps must be a mapping of descriptions to numbers, got {type(gaps).__name__}")
        if not gaps:
            raise ValueError("gaps is empty: there is nothing to check")
        for name in gaps:
            if not isinstance(name, str):
                raise TypeError(f"every description in gaps must be a string, got {type(name).__name__} {name!r}")
        values = []
        for name, gap in gaps.items():
            if not _is_scalar(_unwrap(gap)):
                raise TypeError(f"the gap of {name!r} must be one number (or a one-element tensor)")
            values.append(_numbers(gap)[0])
        below = _positive("below", below)
        for name, gap in zip(gaps, values, strict=True):
            report(name, gap)
        self.at_most(label, words, values, below)

    def equals(self, label: str, words: str, value: object, expected: object) -> None:
        """Claim ``value == expected``: exact equality of numbers, strings, or lists of them.

        Tensors and arrays are compared as lists. A claim of this form has no margin.

        Raises:
            TypeError: if the label or words are not strings.
            ValueError: if the label is malformed or already stated, or the words are empty.
            ClaimError: if ``value != expected``.
        """
        self._check_label_and_words(label, words)
        measured, wanted = _plain(value), _plain(expected)
        held = measured == wanted
        claim = Claim(self.chapter, label, words, "equals", measured, {"expected": wanted}, held, None)
        self._record(claim)
        if not held and not self.trial:
            raise ClaimError(f"{self._name(label)} does not hold: {words}: measured {measured!r}, expected {wanted!r}")

    def holds(self, label: str, words: str, condition: object, **values: object) -> None:
        """Claim that ``condition`` is true, recording the ``values`` that decide it.

        For claims that are neither a bound nor an equality, e.g. "the slow part dips below zero
        and comes back up": ``claims.holds("slow-dips", words, low < 0 < last, low=low, last=last)``.

        Raises:
            TypeError: if ``condition`` is not a bool (or a one-element boolean tensor or array),
                or the label or words are not strings.
            ValueError: if the label is malformed or already stated, or the words are empty.
            ClaimError: if ``condition`` is false (the message shows the deciding values).
        """
        self._check_label_and_words(label, words)
        condition = _unwrap(condition)
        if not isinstance(condition, bool | np.bool_):
            raise TypeError(f"condition must be a bool, got {type(condition).__name__}")
        held = bool(condition)
        deciding = {name: _plain(v) for name, v in values.items()}
        claim = Claim(self.chapter, label, words, "holds", held, {"values": deciding}, held, None)
        self._record(claim)
        if not held and not self.trial:
            raise ClaimError(f"{self._name(label)} does not hold: {words}: deciding values {deciding}")

    def glue(self, name: str, value: object) -> None:
        """Glue a measured number (or text) the prose states without a bound, under ``name``.

        In a notebook the value is glued for ``{glue:text}`name```; elsewhere nothing is shown.

        Raises:
            TypeError: if ``name`` is not a string, or ``value`` is not a number or a string.
            ValueError: if ``name`` is malformed.
        """
        _check_label(name)
        plain = _plain(value)
        if isinstance(plain, bool) or not isinstance(plain, int | float | str):
            raise TypeError(f"glue takes one number or a string, got {type(value).__name__}")
        if not self.trial:
            _display(name, plain, None)

    # ---- the ledger -------------------------------------------------------------------------

    def failed(self) -> list[Claim]:
        """The recorded claims that did not hold."""
        return [claim for claim in self.claims.values() if not claim.held]

    def fragile(self) -> list[Claim]:
        """The recorded claims that held with a margin below :data:`FRAGILE_MARGIN`."""
        return [claim for claim in self.claims.values() if claim.held and claim.fragile]

    def _name(self, label: str) -> str:
        return f"claim {label!r} of {self.chapter}"

    def _check_label_and_words(self, label: object, words: object) -> None:
        _check_label(label)
        if not isinstance(words, str):
            raise TypeError(f"words must be a string (the prose the claim backs), got {type(words).__name__}")
        if not words.strip():
            raise ValueError(f"words of claim {label!r} are empty: give the sentence the claim backs")
        if label in self._stated_in and self._stated_in[label] == _execution_count():
            raise ValueError(
                f"label {label!r} is stated twice in {self.chapter}: every claim needs its own label"
            )

    def _interval(self, label: str, words: str, value: object, form: str, bounds: dict[str, float]) -> None:
        """A two-sided claim ``bounds["low"] <= value <= bounds["high"]``; margin as a share of the width."""
        low, high = bounds["low"], bounds["high"]

        def margin(x: float) -> float:
            return min(x - low, high - x) / (high - low)

        self._numeric(label, words, value, form, bounds, margin)

    def _one_sided(
        self, label: str, words: str, value: object, bound: float, scale: float | None, form: str,
        decimals: int | None = None,
    ) -> None:
        """``at_least`` or ``at_most``: the margin is the room beyond ``bound`` over ``scale``."""
        if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0):
            raise ValueError(f"decimals must be an integer >= 0 (those the prose shows), got {decimals!r}")
        bound = _finite("bound", bound)
        scale = abs(bound) if scale is None else _positive("scale", scale)
        direction = 1.0 if form == "at_least" else -1.0

        def margin(x: float) -> float:
            room = direction * (x - bound)
            return room / scale if scale else room

        bounds = {"low": bound} if form == "at_least" else {"high": bound}
        self._numeric(label, words, value, form, bounds, margin, has_width=bool(scale), decimals=decimals)

    def _numeric(
        self,
        label: str,
        words: str,
        value: object,
        form: str,
        bounds: dict[str, float],
        margin_of: Any,
        has_width: bool = True,
        decimals: int | None = None,
    ) -> None:
        self._check_label_and_words(label, words)
        measured = _numbers(value)
        if any(math.isnan(x) for x in measured):
            first = next(i for i, x in enumerate(measured) if math.isnan(x))
            where = "" if len(measured) == 1 else f" (value {first} of {len(measured)})"
            raise ClaimError(f"{self._name(label)} cannot be checked: {words}: the measured value is NaN{where}")
        margins = [margin_of(x) for x in measured]
        worst = int(np.argmin(margins))
        held = margins[worst] >= 0
        several = len(measured) > 1 or not _is_scalar(value)
        claim = Claim(
            self.chapter,
            label,
            words,
            form,
            measured[worst],
            bounds,
            held,
            float(margins[worst]) if has_width else None,
            measured[:_MAX_RECORDED_VALUES] if several else None,
            len(measured),
        )
        self._record(claim)
        if not held and not self.trial:
            where = f" (value {worst} of {len(measured)})" if several else ""
            raise ClaimError(
                f"{self._name(label)} does not hold: {words}: measured {measured[worst]:.6g}{where}, "
                f"expected {claim.describe_bounds()}"
            )
        if several and not self.trial:
            low, high = min(measured), max(measured)
            if decimals is not None:  # outwards, so that the rounded number the prose shows stays true
                unit = 10**decimals
                low, high = math.floor(low * unit) / unit, math.ceil(high * unit) / unit
            _display(f"{label}-min", low, None)
            _display(f"{label}-max", high, None)

    def _record(self, claim: Claim) -> None:
        self.claims[claim.label] = claim
        self._stated_in[claim.label] = _execution_count()
        if self.trial:
            return
        _display(claim.label, claim.value if claim.values is None else claim.values, claim.to_json())


# ---- helpers -----------------------------------------------------------------------------------


def _check_label(label: object) -> None:
    if not isinstance(label, str):
        raise TypeError(f"label must be a string, got {type(label).__name__}")
    if not _LABEL.fullmatch(label):
        raise ValueError(
            f"label must be lower-case letters, digits and '-', starting with a letter or digit "
            f"(it is also a glue key), got {label!r}"
        )


def _finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def _unwrap(value: object) -> object:
    """The Python number or bool inside a one-element tensor or array; anything else unchanged."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, np.ndarray | np.generic) and value.size == 1:
        return value.item()
    return value


def _positive(name: str, value: object) -> float:
    value = _finite(name, value)
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def _is_scalar(value: object) -> bool:
    if isinstance(value, torch.Tensor | np.ndarray):
        return value.ndim == 0
    return isinstance(value, numbers.Real)


def _numbers(value: object) -> list[float]:
    """The real numbers of ``value`` (one number, or a sequence, array or tensor of them)."""
    if isinstance(value, torch.Tensor):
        if value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"value must hold real numbers, got a tensor of {value.dtype}")
        flat = [float(x) for x in value.detach().double().flatten().tolist()]
    elif isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf":
            raise TypeError(f"value must hold real numbers, got an array of {value.dtype}")
        flat = [float(x) for x in value.astype(float).ravel()]
    elif isinstance(value, bool | np.bool_):
        raise TypeError("value must be a real number, got a bool: use holds() for a true/false claim")
    elif isinstance(value, numbers.Real):
        flat = [float(value)]
    elif isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        flat = []
        for item in value:
            item = _unwrap(item)
            if isinstance(item, bool | np.bool_) or not isinstance(item, numbers.Real):
                raise TypeError(f"value must hold real numbers, got an item {item!r} of type {type(item).__name__}")
            flat.append(float(item))
    else:
        raise TypeError(f"value must be a real number or a sequence of them, got {type(value).__name__}")
    if not flat:
        raise ValueError("value is empty: a claim needs at least one measured value")
    return flat


def _plain(value: object) -> Any:
    """``value`` as plain Python (numbers, strings, lists, dicts), for comparison and JSON."""
    if isinstance(value, torch.Tensor | np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _ipython() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the book's extra
        return None
    shell = get_ipython()
    return shell if shell is not None and hasattr(shell, "kernel") else None


def _execution_count() -> int | None:
    shell = _ipython()
    return None if shell is None else int(shell.execution_count)


def _display(name: str, value: object, record: dict[str, Any] | None) -> None:
    """In a notebook kernel, glue ``value`` (hidden) under ``name``, with the claim ``record``."""
    shell = _ipython()
    if shell is None:
        return
    from IPython.display import display

    plain = _plain(value)
    data = {_GLUE_PREFIX + "text/plain": repr(plain)}
    metadata: dict[str, Any] = {"scrapbook": {"name": name, "mime_prefix": _GLUE_PREFIX}}
    if record is not None:
        metadata[CLAIM_METADATA_KEY] = record
    display(data, raw=True, metadata=metadata)
