"""Checker of the sinusoidal-table exercise.

:func:`~posenc.exercises.check_sinusoidal` compares the student's table with the reference and recognises the
typical mistakes (sine and cosine swapped, concatenated instead of interleaved columns, a wrong exponent or base,
positions starting at 1, angles computed in too low a precision).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from ._angles import _unshared_pair
from ._readings import _Case
from ._transforms import _probing
from .checking import (
    _EPS32,
    _SEED,
    CheckResult,
    _close,
    _distinct,
    _dtype,
    _expect_shape,
    _expect_tensor,
    _first_difference,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
)
from .comparing import _ladder_slip

__all__ = ["check_sinusoidal"]

# --------------------------------------------------------------------------- sinusoidal encoding


@dataclass(frozen=True)
class _SinusoidVariant:
    """One way of building the table: the reference, or the reference with typical deviations."""

    concatenated: bool = False
    cos_first: bool = False
    pair_exponent: bool = False  # θ_ℓ = base^(-ℓ/dim) instead of base^(-2ℓ/dim)
    base: float | None = None  # None: the base asked for
    offset: int = 0  # row i encodes position i + offset

    def table(self, seq_len: int, dim: int, base: float) -> torch.Tensor:
        base = self.base if self.base is not None else base
        positions = torch.arange(seq_len, dtype=torch.float64) + self.offset
        k = torch.arange(dim // 2, dtype=torch.float64)
        theta = float(base) ** (-(k if self.pair_exponent else 2 * k) / dim)
        phase = positions[:, None] * theta[None, :]
        first, second = (phase.cos(), phase.sin()) if self.cos_first else (phase.sin(), phase.cos())
        if self.concatenated:
            return torch.cat((first, second), dim=-1)
        return torch.stack((first, second), dim=-1).flatten(-2)

    def entry(self, row: int, column: int, dim: int) -> str:
        """The formula of entry ``(row, column)``, e.g. ``cos(3·θ_2)``."""
        if self.concatenated:
            k, second = column % (dim // 2), column >= dim // 2
        else:
            k, second = column // 2, bool(column % 2)
        function = ("sin", "cos")[second != self.cos_first]
        theta = "θ'" if self.pair_exponent or self.base is not None else "θ"
        return f"{function}({row + self.offset}·{theta}_{k})"

    def deviations(self) -> int:
        return sum((self.concatenated, self.cos_first, self.pair_exponent, self.base is not None, self.offset != 0))


def _sinusoid_bound(seq_len: int, offset: int = 0) -> torch.Tensor:
    """Per-row tolerance: float32 rounding, plus the error of angles i·θ_ℓ formed in float32."""
    positions = (torch.arange(seq_len, dtype=torch.float64) + offset).abs()
    return (2e-6 + 8 * _EPS32 * positions)[:, None]


def _explain_sinusoid(variant: _SinusoidVariant, base: float, dim: int) -> str:
    parts = []
    if variant.concatenated:
        parts.append(
            "your table is in the concatenated layout (all sines, then all cosines"
            + (", cosines first" if variant.cos_first else "")
            + "); this exercise asks for the interleaved layout P[i, 2ℓ] = sin(i·θ_ℓ), P[i, 2ℓ+1] = cos(i·θ_ℓ): "
            "stack sin and cos on a new last axis and flatten, or fill the columns 0::2 and 1::2"
        )
    elif variant.cos_first:
        parts.append(
            "sine and cosine are swapped — check the parity of your column indices: even columns 2ℓ hold "
            "sin(i·θ_ℓ), odd columns 2ℓ+1 hold cos(i·θ_ℓ)"
        )
    if variant.pair_exponent:
        parts.append(
            "your frequencies are θ'_ℓ = base^(-ℓ/dim) instead of θ_ℓ = base^(-2ℓ/dim): the exponent uses the pair "
            "index ℓ where it needs the column index 2ℓ, as in torch.arange(0, dim, 2) / dim (or, if yours has it, the "
            "base is its square root: both give these numbers)"
        )
    if variant.base is not None:
        wrong = variant.base
        if base != 10000.0 and wrong == 10000.0:
            parts.append(
                f"your function ignores its base argument: called with base={base:g} it returns the table for "
                "base 10000 (θ'_ℓ = 10000^(-2ℓ/dim))"
            )
        elif wrong == 1000.0 and base == 10000.0:
            parts.append(
                "your table fits base 1000 instead of 10000 (θ'_ℓ = 1000^(-2ℓ/dim)) — the \"1000 vs 10000\" bug: "
                "check the constant in your frequencies, or use the base argument"
            )
        elif dim <= 4:  # one frequency besides θ_0 = 1: a wrong base and a wrong exponent give the same table
            parts.append(
                f"your second pair turns at {_num(float(wrong) ** (-2 / dim))} per position, not θ_1 = "
                f"{_num(base ** (-2 / dim))}: with dim = {dim} a wrong base and a wrong exponent look alike, so check "
                "both the exponent -2ℓ/dim and the base"
            )
        else:
            parts.append(
                f"your table fits base {_num(wrong)} instead of {base:g} (θ'_ℓ = {_num(wrong)}^(-2ℓ/dim)): check how "
                "you use the base argument, and the exponent: -2ℓ/dim scaled by "
                f"{_num(math.log(float(wrong)) / math.log(base))} (another denominator than dim) gives the same table"
            )
    if variant.offset:
        parts.append(
            f"your positions start at {variant.offset} instead of 0: row i must encode position i (row 0 is "
            "sin 0 = 0, cos 0 = 1 alternating)"
        )
    return "; ".join(parts)


def _estimate_base(got: torch.Tensor, dim: int) -> float | None:
    """The base that makes ``got[1, 2] = sin(θ_1)`` with ``θ_1 = base^(-2/dim)``, if it is meaningful."""
    if got.shape[0] < 2 or dim < 4:
        return None
    value = float(got[1, 2])
    if not 0 < value < 1:
        return None
    estimate = math.asin(value) ** (-dim / 2)
    return estimate if math.isfinite(estimate) and 1 < estimate < 1e12 else None


@_public
def check_sinusoidal(fn: Callable[..., Any]) -> CheckResult:
    r"""Check a student's sinusoidal encoding ``fn(seq_len, dim, base=10000.0) -> (seq_len, dim)``.

    The table must be :func:`posenc.absolute.sinusoidal_encoding`: ``P[i, 2ℓ] = sin(i θ_ℓ)`` and
    ``P[i, 2ℓ+1] = cos(i θ_ℓ)`` with ``θ_ℓ = base^(-2ℓ/dim)``, in float32 or float64. The hidden
    cases use lengths from 1 to 2048, widths from 2 to 64, the default base and others (100, 500
    and a random one).

    Angles formed in float32 (as d2l's table does) fail on the long table, where they drift by
    about ``i·2^-24`` from the float64 reference: the chapter forms its angles in float64 and
    casts the table at the end, which is exact to float32 rounding at every position.

    Diagnosed mistakes: sine and cosine swapped; concatenated layout instead of interleaved;
    wrong base (the one the table fits is named, e.g. 1000 instead of 10000) or the base argument
    ignored; exponent ``ℓ/dim`` instead of ``2ℓ/dim``; positions starting at 1; angles in float32
    and precision lost at far positions; transposed or otherwise wrong shape; wrong dtype; exceptions.

    Args:
        fn: the student's function.

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable.
    """

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        random_len = int(torch.randint(20, 60, (1,), generator=generator))
        random_dim = 2 * int(torch.randint(3, 12, (1,), generator=generator))
        random_base = round(float(torch.empty(1).uniform_(200.0, 2000.0, generator=generator)), 1)
        cases: list[tuple[int, int, float | None]] = [
            (6, 4, None),
            (11, 6, 10000.0),
            (9, 8, 500.0),
            (25, 12, 100.0),
            (16, 32, None),
            (1, 2, None),
            (random_len, random_dim, random_base),
            (2048, 64, None),
        ]
        for seq_len, dim, base in cases:
            tags = {"far"} if seq_len > 100 else set()
            session.run(partial(_sinusoidal_case, session, seq_len, dim, base), tags)
        if session.only_failed_with("far") and "float32 angles" not in session.problems:
            session.problem(
                "far hint",
                "only the long table (positions up to 2047) failed: build it without Python loops and form the "
                "angles i·θ_ℓ in float64",
            )
        verified = [
            f"matches posenc.sinusoidal_encoding on {session.cases} hidden cases: lengths 1 to 2048, widths 2 to "
            f"64, the default base 10000 and bases 100, 500 and {random_base:g}",
            "interleaved layout: even columns 2ℓ hold sin(i·θ_ℓ), odd columns 2ℓ+1 hold cos(i·θ_ℓ), with "
            "θ_ℓ = base^(-2ℓ/dim)",
        ]
        verified.append("far positions (up to 2047) are exact to float32 rounding")
        return verified

    keys, generic = _probing(
        fn, ("sinusoid values",), _sinusoid_probe_reference,
        [_Case((n, d), "probe", {"base": b}) for n, d, b in ((50, 16, 1e4), (20, 8, 1e2), (7, 32, 5e2))],
        "the table", ("seq_len", "dim"), atol=1e-4, rtol=1e-4)
    return _run_checker("sinusoidal encoding", fn, body, reading=(keys, lambda: _sinusoid_ladder(fn) or generic()))


def _sinusoid_probe_reference(seq_len: int, dim: int, base: float = 10000.0) -> torch.Tensor:
    return _SinusoidVariant().table(seq_len, dim, base)


def _sinusoid_ladder(fn: Callable[..., Any]) -> str | None:
    """A slip of the frequency ladder shared by every RoPE exercise (a lost minus sign, ℓ from 1), read at d = 16.

    Three rows and base 100 keep every angle of a growing ladder small enough for float32 to form it exactly.
    """
    try:
        got = torch.as_tensor(fn(3, 16, base=100.0)).double()
    except Exception:  # noqa: BLE001 (an answer that cannot take the probe: no reading)
        return None
    angles = torch.arange(3, dtype=torch.float64)[:, None]
    return _ladder_slip(got, 16, 100.0, lambda theta: torch.stack(
        ((angles * theta).sin(), (angles * theta).cos()), -1).flatten(-2))


def _sinusoidal_case(session: _Session, seq_len: int, dim: int, base: float | None) -> None:
    if base is None:
        call = f"fn({seq_len}, {dim})"
        returned = session.call(call, seq_len, dim)
        base = 10000.0
    else:
        call = f"fn({seq_len}, {dim}, base={base:g})"
        returned = session.call(call, seq_len, dim, base=base)
    got = _expect_tensor(returned, f"a ({seq_len}, {dim}) table", call)
    expected = _SinusoidVariant().table(seq_len, dim, base)
    if tuple(got.shape) == (dim, seq_len) and seq_len != dim:
        hint = " (rows are positions, columns features)"
        if got.is_floating_point() and _close(got.double().T, expected):
            hint = ": your table is transposed — rows must be positions and columns the features"
        raise _Problem(
            "transposed", f"{call} returned a table of shape {(dim, seq_len)}; expected {(seq_len, dim)}{hint}"
        )
    _expect_shape(got, (seq_len, dim), "a table", call, " = (seq_len, dim)")
    if got.dtype not in (torch.float32, torch.float64):
        raise _Problem(
            "dtype", f"{call} returned dtype {_dtype(got.dtype)}; expected a float32 (or float64) table",
        )
    got = got.double()
    if not bool(torch.isfinite(got).all()):
        index = tuple(int(i) for i in (~torch.isfinite(got)).nonzero()[0])
        raise _Problem(
            "not finite",
            f"{call}: position {index[0]}, column {index[1]} is {_num(float(got[index]))}; every entry must be a "
            "finite number between -1 and 1",
        )
    error = (got - expected).abs()
    bound = _sinusoid_bound(seq_len)
    if bool((error <= bound).all()):
        # A float32 table with float64 angles is within 6e-8 at every position; float32 angles drift by about
        # i·2^-24, which only a long table separates from rounding (short ones are accepted as they are).
        if float(error.max()) > 1e-6 and seq_len > 100:
            row, column = _first_difference(got, expected, atol=float(error.max()) * 0.999)
            raise _Problem(
                "float32 angles",
                f"{call}: your table drifts from the float64 reference as the position grows (error "
                f"{float(error.max()):.1e} at position {row}, column {column}, about position × 2^-24, the float32 "
                "spacing of the angle): the angles i·θ_ℓ are formed in float32, as d2l's and the Annotated "
                "Transformer's tables do. Form the positions and frequencies in float64 and cast the table to "
                "float32 at the end, as the chapter does: every entry is then within float32 rounding (6e-8), and "
                "torch.allclose with posenc.sinusoidal_encoding holds for long tables too",
            )
        return
    raise _diagnose_sinusoid(got, expected, seq_len, dim, base, call)


def _diagnose_sinusoid(
    got: torch.Tensor, expected: torch.Tensor, seq_len: int, dim: int, base: float, call: str
) -> _Problem:
    bases: list[float | None] = [None]
    # A base near sqrt(base) is the exponent k/dim mistake, which has its own variant.
    for candidate in (10000.0, 1000.0, _estimate_base(got, dim)):
        if candidate is not None and all(
            not math.isclose(candidate, other, rel_tol=1e-3)
            for other in (*(other or base for other in bases), math.sqrt(base))
        ):
            bases.append(candidate)
    variants = [
        _SinusoidVariant(concatenated, cos_first, pair_exponent, wrong_base, offset)
        for concatenated, cos_first, pair_exponent, wrong_base, offset in itertools.product(
            (False, True), (False, True), (False, True), bases, (0, 1)
        )
    ]
    variants = sorted(variants[1:], key=lambda variant: variant.deviations())
    reference = _SinusoidVariant()

    def located(variant: _SinusoidVariant | None) -> str:
        difference = (got - expected).abs() > _sinusoid_bound(seq_len)
        later = difference[1:].nonzero()
        row, column = (int(later[0][0]) + 1, int(later[0][1])) if len(later) else tuple(
            int(i) for i in difference.nonzero()[0]
        )
        should, was = _distinct(float(expected[row, column]), float(got[row, column]))
        text = (
            f"{call}: position {row}, column {column}: expected {reference.entry(row, column, dim)} = {should}, "
            f"got {was}"
        )
        return text + (f" = {variant.entry(row, column, dim)}" if variant is not None else "")

    for variant in variants:
        table = variant.table(seq_len, dim, base)
        if bool(((got - table).abs() <= _sinusoid_bound(seq_len, variant.offset)).all()):
            base_kind = "" if variant.base is None else "10000" if variant.base == 10000.0 else "other"
            flags = (variant.concatenated, variant.cos_first, variant.pair_exponent, base_kind, variant.offset)
            key = f"sinusoid {flags}" + (" dim 4" if dim <= 4 else "")  # an ambiguous reading: listed apart
            return _Problem(key, f"{located(variant)}: {_explain_sinusoid(variant, base, dim)}")
    error = (got - expected).abs()
    rows_error = error.max(dim=-1).values
    near = rows_error[: min(seq_len, 16)]
    row = int(torch.argmax(rows_error))
    # Lost precision spreads over many entries; a few wrong entries are a different slip, not the arithmetic.
    spread = int((error > 1e-5).sum()) >= max(4, error.numel() // 10)
    if spread and seq_len > 16 and bool((near <= 1e-5).all()) and float(rows_error.max()) < 0.5:
        return _Problem(
            "precision",
            f"{call}: your table matches the reference at small positions but drifts at far ones (error "
            f"{float(rows_error[row]):.1e} at position {row}), more than float32 angles explain: the angles i·θ_ℓ lose "
            "precision — form them in float64 and cast the table at the end",
        )
    if spread and bool((near <= 1e-2).all()):
        return _Problem(
            "precision",
            f"{located(None)}: your table is close to the reference but not accurate enough (error up to "
            f"{float(rows_error[row]):.1e}, at position {row}), far beyond float32 rounding: compute the angles and "
            "their sines and cosines in float64, not in half precision",
        )
    negated = expected.clone()
    negated[..., 0::2] = -negated[..., 0::2]
    if _close(got, negated) and not _close(negated, expected):
        return _Problem("negative angles", f"{located(None)}: your sines have the opposite sign, the cosines are "
                        "right: the angles are -i·θ_ℓ; position i turns by +i·θ_ℓ (a minus in the exponent belongs to "
                        "θ_ℓ = base^(-2ℓ/d), not to the angle)")
    evens = got[..., 0::2]
    if seq_len > 1 and dim >= 2 and _close(got[..., 1::2], evens) and bool((evens.abs() > 1e-6).any()):
        return _Problem("sines twice", f"{located(None)}: your odd columns repeat the even ones, sines twice: the "
                        "odd columns hold the cosines, P[i, 2ℓ+1] = cos(i·θ_ℓ)")
    shared = _unshared_pair(got, dim)
    return _Problem(
        "sinusoid values",
        f"{located(None)}{': ' + shared if shared else ''}. Check the formula P[i, 2ℓ] = sin(i·θ_ℓ), "
        "P[i, 2ℓ+1] = cos(i·θ_ℓ) with θ_ℓ = base^(-2ℓ/dim)",
    )
