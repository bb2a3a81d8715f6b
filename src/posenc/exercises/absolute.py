"""Checkers of the absolute-position exercises: padded position ids and the sinusoidal table.

- :func:`~posenc.exercises.check_padded_positions`: RoBERTa-style position ids of a padded
  batch (padding keeps ``padding_idx``, real tokens count from ``padding_idx + 1``);
- :func:`~posenc.exercises.check_sinusoidal`: the sinusoidal encoding table, with the typical
  mistakes recognised (sine and cosine swapped, concatenated instead of interleaved columns, a
  wrong exponent or base, positions starting at 1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from .._validation import check_int
from ._angles import _unshared_pair
from ._readings import _Case
from ._transforms import _probing
from .checking import (
    _EPS32,
    _SEED,
    CheckResult,
    _check_callable,
    _close,
    _distinct,
    _dtype,
    _expect_integer,
    _expect_shape,
    _expect_tensor,
    _first_difference,
    _num,
    _Problem,
    _public,
    _run_checker,
    _Session,
    _unchanged,
)
from .comparing import _ladder_slip

__all__ = ["check_padded_positions", "check_sinusoidal"]


# --------------------------------------------------------------------------- padded positions


def _padded_reference(input_ids: torch.Tensor, mask_idx: int, offset_idx: int) -> torch.Tensor:
    real = input_ids.ne(mask_idx).long()
    return torch.cumsum(real, dim=-1) * real + offset_idx


def _padding_kind(row: torch.Tensor, padding_idx: int) -> str:
    real = row.ne(padding_idx)
    count = int((~real).sum())
    if count == 0:
        return "no padding"
    if count == row.numel():
        return "all padding"
    first, last = int(real.nonzero()[0]), int(real.nonzero()[-1])
    if not bool(real[first : last + 1].all()):
        return "padding inside"
    if first > 0 and last == row.numel() - 1:
        return f"left padding: {count} padding token{'s' if count > 1 else ''} first"
    if first == 0:
        return f"right padding: {count} padding token{'s' if count > 1 else ''} at the end"
    return "padding on both sides"


def _padded_batch(
    generator: torch.Generator, lengths: Sequence[int], seq_len: int, sides: Sequence[str], padding_idx: int,
    plant: int | None = None,
) -> torch.Tensor:
    ids = torch.randint(2, 60, (len(lengths), seq_len), generator=generator)
    ids = torch.where(ids == padding_idx, ids + 7, ids)
    if plant is not None and plant != padding_idx:
        ids[:, ::3] = plant  # a real token whose id is some other padding_idx
    for row, (length, side) in enumerate(zip(lengths, sides, strict=True)):
        if side == "left":
            ids[row, : seq_len - length] = padding_idx
        else:
            ids[row, length:] = padding_idx
    return ids


@_public
def check_padded_positions(fn: Callable[..., Any], padding_idx: int = 1) -> CheckResult:
    """Check a student's RoBERTa-style position ids ``fn(input_ids, padding_idx=1) -> LongTensor``.

    For a batch ``input_ids`` of shape ``(batch, seq_len)`` in which padding tokens have the id
    ``padding_idx``, real tokens must get the positions ``padding_idx + 1, padding_idx + 2, ...``,
    counting only real tokens, and padding tokens the position ``padding_idx`` (as in Hugging
    Face's ``create_position_ids_from_input_ids``). The hidden batches pad on the right, on the
    left, not at all, and mix these in one batch; some use other values of ``padding_idx`` (0 and
    ``padding_idx + 3``) and one relies on the default ``padding_idx=1``.

    Diagnosed mistakes: counting slots instead of real tokens (right padding works, left padding
    does not); padding tokens not set to ``padding_idx``; positions off by one (starting at
    ``padding_idx`` or ``padding_idx + 2``); the ``padding_idx`` argument ignored; wrong shape; a
    float or boolean dtype (another integer dtype, such as int32, passes with a note: indices are
    usually int64); input modified in place; exceptions.

    Args:
        fn: the student's function.
        padding_idx: the padding id of the main hidden cases (>= 0).

    Returns:
        A :class:`CheckResult`, true when every case passed.

    Raises:
        TypeError: if ``fn`` is not callable or ``padding_idx`` is not an integer.
        ValueError: if ``padding_idx < 0``.
    """
    _check_callable(fn)
    main = check_int("padding_idx", padding_idx, minimum=0)
    others = [main + 3, 0 if main != 0 else 2]

    def body(session: _Session) -> list[str]:
        generator = torch.Generator().manual_seed(_SEED)
        cases: list[tuple[torch.Tensor, int, bool, set[str]]] = [
            (_padded_batch(generator, [8, 5, 2], 8, ["left"] * 3, main), main, True, {"left"}),
            (_padded_batch(generator, [7, 4, 2], 7, ["right"] * 3, main), main, True, {"right"}),
            (_padded_batch(generator, [6, 6], 6, ["right"] * 2, main), main, True, {"none"}),
            (_padded_batch(generator, [9, 4, 6, 3], 9, ["right", "left", "left", "right"], main), main, True, set()),
            (_padded_batch(generator, [3], 6, ["left"], main), main, True, {"left"}),
            (_padded_batch(generator, [5, 3, 2], 6, ["right", "left", "left"], 1), 1, False, {"default"}),
        ]
        for other in others:
            plant = 1 if other != 1 else None
            ids = _padded_batch(generator, [5, 3, 6], 7, ["left", "right", "left"], other, plant=plant)
            cases.append((ids, other, True, {"other"}))
        for ids, pad, explicit, tags in cases:
            session.run(partial(_padded_case, session, ids, pad, explicit), tags)
        if session.failed_exactly_with("default"):
            default = ("only the call without padding_idx failed: the default of your padding_idx is not 1; the "
                       "signature is fn(input_ids, padding_idx=1)")
            session.problems = {"default": default, **session.problems}
        values = ", ".join(str(value) for value in sorted({main, *others}))
        return [
            f"matches the reference (cumulative count of real tokens + padding_idx) on {session.cases} hidden "
            "batches: right padding, left padding, no padding, and rows padded differently in one batch",
            "real tokens are numbered padding_idx + 1, padding_idx + 2, ... counting only real tokens; padding "
            "tokens get padding_idx",
            f"the padding_idx argument is used, for padding detection and numbering (tested with padding_idx = "
            f"{values}, and through the default padding_idx=1)",
        ]

    return _run_checker("padded positions", fn, body, reading=_probing(
        fn, ("positions", "real tokens"), _padded_probe_reference, _padded_probes(), "the positions",
        ("input_ids", "padding_idx")))


def _padded_probe_reference(input_ids: torch.Tensor, padding_idx: int = 1) -> torch.Tensor:
    return _padded_reference(input_ids, padding_idx, padding_idx)


def _padded_probes() -> list[_Case]:
    """Probe inputs: padding at the end, at the start and in the middle, padding_idx 1 (given, so that a reading can
    name it) and others."""
    ids = torch.tensor([[5, 9, 7, 4, 1, 1], [1, 1, 6, 8, 3, 9], [4, 1, 6, 1, 1, 2]])
    return [_Case((ids,), "probe", {"padding_idx": 1}), _Case((ids.where(ids != 1, 0),), "probe", {"padding_idx": 0}),
            _Case((ids.where(ids != 1, 3),), "probe", {"padding_idx": 3})]


def _padded_case(session: _Session, ids: torch.Tensor, pad: int, explicit: bool) -> None:
    given = ids.clone()
    call = f"fn(input_ids of shape {tuple(ids.shape)}, padding_idx={pad})" if explicit else (
        f"fn(input_ids of shape {tuple(ids.shape)}) (default padding_idx=1)"
    )
    returned = session.call(call, given, padding_idx=pad) if explicit else session.call(call, given)
    _unchanged(session, {"input_ids": ids}, {"input_ids": given}, call)
    got = _expect_tensor(returned, "positions", call)
    _expect_shape(got, tuple(ids.shape), "positions", call, " (the shape of input_ids)")
    _expect_integer(session, got, "positions", call)
    got = got.long()
    expected = _padded_reference(ids, pad, pad)
    if torch.equal(got, expected):
        return
    real = ids.ne(pad)
    bad_rows = (got != expected).any(-1).nonzero().flatten().tolist()
    row = bad_rows[0]

    def where(row: int) -> str:
        return f"row {row} of input_ids = {ids[row].tolist()} ({_padding_kind(ids[row], pad)})"

    def rows(row: int) -> str:
        return f"expected {expected[row].tolist()}, got {got[row].tolist()}"

    slots = torch.arange(ids.shape[-1]).expand_as(ids) + pad + 1
    if not torch.equal(got[real], expected[real]):
        difference = (got - expected)[real]
        shift = int(difference[0]) if bool((difference == difference[0]).all()) else None
        # With padding_idx=0, starting one too high and ignoring padding_idx look alike: a shift
        # already seen with the main padding_idx decides.
        seen_shift = shift is not None and f"off by {shift}" in session.problems
        ignored = [
            (_padded_reference(ids, 1, pad), "detects padding with the id 1 instead of padding_idx"),
            (_padded_reference(ids, pad, 1), "numbers tokens from 1 + 1 = 2 instead of padding_idx + 1"),
            (_padded_reference(ids, 1, 1), "behaves as if padding_idx were 1"),
        ]
        if torch.equal(got[real], slots[real]):
            session.problem(
                "slots",
                f"counts slots instead of real tokens: {where(row)}: {rows(row)}. Your positions are the column "
                "numbers + padding_idx + 1, which is right only when padding comes last; in a left-padded row the "
                f"first real token must get padding_idx + 1 = {pad + 1}. Count the real tokens instead: a "
                "cumulative sum along the row of the mask input_ids != padding_idx",
            )
        elif pad != 1 and not seen_shift and any(torch.equal(got[real], variant[real]) for variant, _ in ignored):
            what = next(text for variant, text in ignored if torch.equal(got[real], variant[real]))
            session.problem(
                "padding_idx ignored",
                f"the padding_idx argument is ignored: with padding_idx={pad}, your function {what}. {where(row)}: "
                f"{rows(row)}. Use the argument, not the constant 1",
            )
        elif shift is not None:
            start = pad + 1 + shift
            if shift > 0:
                hint = "the cumulative sum of the mask already counts from 1, so add padding_idx to it, not more"
            else:
                hint = "add padding_idx to a count of real tokens that starts at 1 (a cumulative sum of the mask)"
            session.problem(
                f"off by {shift}",
                f"off by {'one' if abs(shift) == 1 else abs(shift)} ({shift:+d}): {where(row)}: {rows(row)}. The "
                f"first real token must get padding_idx + 1 = {pad + 1}, you start at {start}"
                + (" = padding_idx, which is reserved for padding" if start == pad else "")
                + f": {hint}",
            )
        elif torch.equal(got[real], (real.long().flip(-1).cumsum(-1).flip(-1) * real + pad)[real]):
            session.problem(
                "count reversed",
                f"your count runs backwards, from the end of the row: {where(row)}: {rows(row)}. Real tokens are "
                "numbered in reading order, the first one padding_idx + 1: a cumulative sum from the start of the row",
            )
        elif ids.dim() > 1 and torch.equal(got[real], (torch.cumsum(real.long(), 0) * real + pad)[real]):
            session.problem(
                "count axis",
                f"you counted along the batch axis (dim=0), down the columns: {where(row)}: {rows(row)}. Each row is "
                "its own sequence: count its real tokens along the row, torch.cumsum(mask, dim=1) (or dim=-1)",
            )
        elif ids.dim() > 1 and torch.equal(got[real], (real.long().flatten().cumsum(0).view_as(real) + pad)[real]):
            session.problem(
                "count flattened",
                f"your count runs on from one row to the next: {where(row)}: {rows(row)}. Each row is its own "
                "sequence, counted from padding_idx + 1: a cumulative sum along the row, torch.cumsum(mask, dim=1)",
            )
        elif bool((taken := real & got.eq(pad)).any()):
            ids_taken = sorted(set(ids[taken].tolist()))
            below = " (all smaller than padding_idx)" if max(ids_taken) < pad else ""
            row = int(taken.nonzero()[0][0]) if ids.dim() > 1 else row
            session.problem(
                "real tokens as padding",
                f"real tokens with the ids {ids_taken}{below} got the padding position {pad}: you treat them as "
                f"padding. {where(row)}: {rows(row)}. Padding is exactly the tokens whose id equals padding_idx: the "
                "mask is input_ids != padding_idx (input_ids.ne(padding_idx)), not a comparison such as > or <",
            )
        else:
            column = int((got[row] != expected[row]).nonzero()[0])
            session.problem(
                "real tokens",
                f"{where(row)}: {rows(row)}; the first difference is at column {column}. Real tokens count "
                f"{pad + 1}, {pad + 2}, ... in order, skipping padding tokens",
            )
    padding_values = got[~real]
    if padding_values.numel() and not bool((padding_values == pad).all()):
        index = tuple(int(i) for i in ((got != pad) & ~real).nonzero()[0])
        counted = torch.cumsum(real.long(), -1) + pad
        hint = (
            ": multiply the cumulative count by the mask so that padding tokens get 0 before adding padding_idx"
            if torch.equal(got[~real], counted[~real]) or torch.equal(got[~real], slots[~real])
            else ""
        )
        if pad != 1 and int(got[index]) == 1:
            hint = ": 1 is only the default padding_idx; use the argument"
        session.problem(
            "padding values",
            f"padding tokens are not set to padding_idx: {where(index[0])}: column {index[1]} is padding (id {pad}), "
            f"so its position must be padding_idx = {pad}, got {int(got[index])}{hint}",
        )
    if not session.case_failed:  # a difference the diagnoses above did not name
        session.problem("positions", f"{where(row)}: {rows(row)}")


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
            "index ℓ where it needs the column index 2ℓ, as in torch.arange(0, dim, 2) / dim"
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
                "you use the base argument"
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

    Angles formed in float32 (as d2l does) are accepted, with a precision note when their error
    at far positions is visible; errors beyond that fail.

    Diagnosed mistakes: sine and cosine swapped; concatenated layout instead of interleaved;
    wrong base (the one the table fits is named, e.g. 1000 instead of 10000) or the base argument
    ignored; exponent ``ℓ/dim`` instead of ``2ℓ/dim``; positions starting at 1; precision lost at
    far positions; transposed or otherwise wrong shape; wrong dtype; exceptions.

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
        if session.only_failed_with("far"):
            session.problem(
                "far hint",
                "only the long table (positions up to 2047) failed: build it without Python loops and form the "
                "angles i·θ_ℓ in float64 (or at least float32)",
            )
        verified = [
            f"matches posenc.sinusoidal_encoding on {session.cases} hidden cases: lengths 1 to 2048, widths 2 to "
            f"64, the default base 10000 and bases 100, 500 and {random_base:g}",
            "interleaved layout: even columns 2ℓ hold sin(i·θ_ℓ), odd columns 2ℓ+1 hold cos(i·θ_ℓ), with "
            "θ_ℓ = base^(-2ℓ/dim)",
        ]
        if "precision" not in session.notes:
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
        if float(error.max()) > 1e-6:  # a float32 table with float64 angles is within 6e-8
            row, column = _first_difference(got, expected, atol=float(error.max()) * 0.999)
            session.note(
                "precision",
                f"precision note: your table differs from the float64 reference by up to {float(error.max()):.1e} "
                f"(position {row}, column {column}), an error that grows with the position: the angles i·θ_ℓ seem "
                "to be formed in float32. This is accepted (d2l does the same), but forming them in float64 and "
                "casting the table at the end makes far positions exact to float32 rounding",
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
            "precision — form them in float64 (or at least float32) and cast the table at the end",
        )
    if spread and bool((near <= 1e-2).all()):
        return _Problem(
            "precision",
            f"{located(None)}: your table is close to the reference but not accurate enough (error up to "
            f"{float(rows_error[row]):.1e}, at position {row}), far beyond float32 rounding: compute the angles and "
            "their sines and cosines in float64 (or at least float32), not in half precision",
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
