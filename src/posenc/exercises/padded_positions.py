"""Checker of the padded-position exercise: RoBERTa-style position ids of a padded batch.

:func:`~posenc.exercises.check_padded_positions` checks that padding keeps ``padding_idx`` and real tokens count
from ``padding_idx + 1``, with left and right padding, and names the usual slips (counting padding, starting at 0
or at ``padding_idx``, a hard-coded ``padding_idx``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import torch

from .._validation import check_int
from ._readings import _Case
from ._transforms import _probing
from .checking import (
    _SEED,
    CheckResult,
    _check_callable,
    _expect_integer,
    _expect_shape,
    _expect_tensor,
    _public,
    _run_checker,
    _Session,
    _unchanged,
)

__all__ = ["check_padded_positions"]


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
